"""A fourth set of customer requests for the routing evaluation (``benchmarks/local_routing.py``).

``FINAL`` was written after the prompts and the decoding of the embedded model's routing were settled, by
someone who had not seen the model's answers, and is run once, to check the figures of the other sets. It
follows the format and the labelling rules of ``benchmarks/routing_requests.py``: 15 requests for each
specialist and 15 ambiguous ones, whose label is the specialist who can act on what the customer asks
for, with ``also`` naming any other specialist that would be a fair answer.
"""

from __future__ import annotations

from benchmarks.routing_requests import ACCOUNT, BILLING, TECHNICAL, Request, _ambiguous

FINAL: list[Request] = [
    Request(
        "Hi, Dmitri here. Why does the amount on my bank statement never quite match the price in your "
        "confirmation email? It's always a couple of euros more.",
        BILLING,
    ),
    Request(
        "Hello, I'm Rosa. When I drag a file into a folder the app makes a copy instead of moving it. "
        "Happens every single time, I've got duplicates everywhere now.",
        TECHNICAL,
    ),
    Request("Could my display name say Bex instead of Rebecca? Nobody here calls me Rebecca.", ACCOUNT),
    _ambiguous(
        "I'm the owner of our account but I'm going part-time from next month. Can I hand ownership "
        "over to Jun but still be the one who gets the invoices?",
        ACCOUNT,
        BILLING,
    ),
    Request(
        "Can I split this year's payment across two cards? Neither has a high enough limit on its own.",
        BILLING,
    ),
    Request(
        "2fa is stuck in a loop for me, i type the code, it says ok, then asks for a new code. forever",
        TECHNICAL,
    ),
    Request(
        "We're changing our domain from oldco.com to brightline.com. Is there a way to switch all 25 "
        "people's adresses over in one go, rather than each person doing it themselves?",
        ACCOUNT,
    ),
    _ambiguous(
        "Your invoices page just spins and never loads. I need the one from April for our auditors by "
        "tomorrow morning, please help!",
        BILLING,
        TECHNICAL,
    ),
    Request(
        "We shrank from 30 people to 18 in September. Do we get anything back for the twelve seats we "
        "prepaid through December?",
        BILLING,
    ),
    Request(
        "Tables in the Word export lose all their borders and the column widths are all over the place.",
        TECHNICAL,
    ),
    Request(
        "How do I make two-step verification mandatory for everyone in our workspace? A few people still "
        "haven't turned it on.",
        ACCOUNT,
    ),
    _ambiguous(
        "I switched on two-factor yesterday and now the mobile app rejects every code, so I can't get in "
        "on my phone at all.",
        TECHNICAL,
    ),
    Request(
        "Hallo, we are a German GmbH. Shouldn't reverse charge apply to us instead of you adding 19% VAT "
        "on top?",
        BILLING,
    ),
    Request(
        "Our webhook endpoint gets every event 4 or 5 times, all with the same event id. We've had to "
        "build dedup just to cope.",
        TECHNICAL,
    ),
    Request(
        "I'm off on parental leave from next week. Can Kemal get edit access to all my projects while "
        "I'm away? View only isn't enough for him.",
        ACCOUNT,
    ),
    _ambiguous(
        "Please delete my account. I've been paying for something that has crashed on me every day this "
        "week and I'm done.",
        ACCOUNT,
    ),
    Request(
        "If I renew now, do I keep my current price, or does the increase you announced last week apply "
        "to me too?",
        BILLING,
    ),
    Request("the search box lags so bad that letters show up like a second after i type them", TECHNICAL),
    Request(
        "Please permanently remove the account under lucas.b@example.net. I made it to test something "
        "years ago and can't remember the password.",
        ACCOUNT,
    ),
    _ambiguous(
        "Our new office manager can't see anything to do with payments when she logs in. She's meant to "
        "be taking over paying you from now on.",
        ACCOUNT,
        BILLING,
    ),
    Request(
        "I forgot to put in the promo code from the podcast ad when I signed up on Monday. Can it still "
        "go on my order?",
        BILLING,
    ),
    Request(
        "Installing the Outlook add-in fails with 'The manifest could not be validated'. Our IT guy has "
        "tried on three machines.",
        TECHNICAL,
    ),
    Request(
        "Hi there, my contract ends Friday. Before I go I'd like a complete copy of my messages and files "
        "for my own records.",
        ACCOUNT,
    ),
    _ambiguous(
        "The discount code from your newsletter says 'invalid' at checkout, but the email says it's good "
        "until the end of next month.",
        BILLING,
        TECHNICAL,
    ),
    Request(
        "Instead of my card being charged every month, could I top up some credit with you and have it "
        "come off that?",
        BILLING,
    ),
    Request(
        "Your status page is all green but nobody in our office can load the app, we just get a timeout. "
        "Is it only us?",
        TECHNICAL,
    ),
    Request(
        "How can I see which devices are signed in to my account? I'd like to log out the old work laptop "
        "I handed back.",
        ACCOUNT,
    ),
    _ambiguous(
        "Since I changed my email address I can only sign in with the old one. The new one says 'no "
        "account found'.",
        TECHNICAL,
        ACCOUNT,
    ),
    Request(
        "I opened a dispute with my bank over last month's payment before realising it was just my own "
        "renewal, sorry! What do I need to do so you get paid?",
        BILLING,
    ),
    Request("Emojis in task titles turn into question marks as soon as I hit save.", TECHNICAL),
    Request(
        "our founder left the company and he's still listed as the owner, so none of us can change any "
        "settings. how do we get that moved to one of us?",
        ACCOUNT,
    ),
    _ambiguous(
        "Hi, our whole workspace went read-only this morning. Did something go wrong with our payment?",
        BILLING,
        TECHNICAL,
    ),
    Request(
        "Our finance department wants the monthly invoice split per department rather than one big "
        "total. Can you do that?",
        BILLING,
    ),
    Request(
        "The GraphQL endpoint returns 200 with an empty data object whenever I request more than 100 "
        "items. Under 100 it's fine.",
        TECHNICAL,
    ),
    Request("Is there a place to add my pronouns next to my name so they show in the workspace?", ACCOUNT),
    _ambiguous(
        "Does your uptime guarantee get us any credit for Tuesday's outage? Our whole team was sitting "
        "idle for half a day.",
        BILLING,
    ),
    Request(
        "Do you charge for everyone who's invited or only people who actually use it? Half our staff log "
        "in maybe once a quarter.",
        BILLING,
    ),
    Request(
        "Hello, since updating to iOS 18 the app logs me out whenever I switch to another app and come back.",
        TECHNICAL,
    ),
    Request(
        "Hi there, we've been acquired. Can our workspace be moved under our new parent company's "
        "organisation?",
        ACCOUNT,
    ),
    _ambiguous(
        "The data export you sent us last week is missing all the attachments, it's just the text. We "
        "need the complete thing.",
        ACCOUNT,
        TECHNICAL,
    ),
    Request(
        "i clicked the extra storage pack by accident this morning and it went straight through. can you "
        "undo it and give me the money back pls",
        BILLING,
    ),
    Request(
        "When I @mention someone they never recieve a notification. Tested it with three different "
        "colleagues, same thing.",
        TECHNICAL,
    ),
    Request(
        "I'm taking a few months' break from work. Can my user be switched off for now so nobody assigns "
        "me tasks, and switched back on when I return?",
        ACCOUNT,
    ),
    _ambiguous(
        "Since we turned on single sign-on for our team, about half of the people can't get in anymore.",
        TECHNICAL,
        ACCOUNT,
    ),
    Request(
        "Hi, could the receipts be made out to my freelance business name instead of my own name? The "
        "tax office wants it that way.",
        BILLING,
    ),
    Request(
        "The Microsoft Teams integration posts our alerts into the wrong channel, no matter which one I "
        "pick in the settings.",
        TECHNICAL,
    ),
    Request(
        "Is there a minimum age? My 14 year old wants to sign up for a school project and I'm not sure "
        "it's allowed.",
        ACCOUNT,
    ),
    _ambiguous(
        "The API answers every call with 402 Payment Required, but our dashboard says we're all paid up.",
        TECHNICAL,
        BILLING,
    ),
    Request(
        "There's a late payment fee on our latest invoice, but the transfer left our bank on the due "
        "date. Could you waive it?",
        BILLING,
    ),
    Request(
        "whenever I share my screen on a call, the app window turns completely black for everyone else",
        TECHNICAL,
    ),
    Request(
        "I signed up with one of those Apple 'hide my email' addresses and now I'd like my real email on "
        "the account instead.",
        ACCOUNT,
    ),
    _ambiguous(
        "A former employee still gets our notification emails and can apparently still open our boards. "
        "Why didn't removing her work?",
        ACCOUNT,
        TECHNICAL,
    ),
    Request(
        "We got a quote from your sales rep back in May. Is it still valid or have the prices changed since?",
        BILLING,
    ),
    Request(
        "the offline mode doesnt save anything?? worked on the train for an hour, got back online and "
        "it was all gone",
        TECHNICAL,
    ),
    Request(
        "When someone leaves our company, what happens to the documents they made? We want those to stay "
        "with the team, not disappear with the person.",
        ACCOUNT,
    ),
    _ambiguous(
        "hey, the app just logged me into someone else's account?? i'm seeing projects that definately "
        "aren't mine",
        TECHNICAL,
        ACCOUNT,
    ),
    Request(
        "Good afternoon, this is Wen from Meridian Dental. We pay for the premium tier but honestly only "
        "use the basics. What would we save by going down a level?",
        BILLING,
    ),
    Request(
        "Hey, the scheduled report went out at 3am instead of 9am, and the attachment was empty.", TECHNICAL
    ),
    Request(
        "We've moved to another tool, so please close our organisation's account and everything in it.",
        ACCOUNT,
    ),
    _ambiguous(
        "The confirmation email for my payment never came, and I can't tell if the upgrade actually went "
        "through.",
        BILLING,
        TECHNICAL,
    ),
]
