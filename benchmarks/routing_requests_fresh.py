"""A third set of customer requests for the routing evaluation (``benchmarks/local_routing.py``).

``FRESH`` was written after the prompts and decoding were tuned, and is run once, to check the held-out
figure on requests nobody tuned on. It follows the format and the labelling rules of
``benchmarks/routing_requests.py``: 15 requests for each specialist and 15 ambiguous ones, whose label is
the specialist who can act on what the customer asks for, with ``also`` naming any other specialist that
would be a fair answer.
"""

from __future__ import annotations

from benchmarks.routing_requests import ACCOUNT, BILLING, TECHNICAL, Request, _ambiguous

FRESH: list[Request] = [
    Request(
        "Hey there, quick one: if I move from Basic to Premium halfway through the month, do I pay "
        "for the whole month again or just the difference?",
        BILLING,
    ),
    Request(
        "Hi team, since Tuesday every time I hit Save on a long document I get 'Something went wrong "
        "(code 4013)' and lose my last few edits. Really frustrating.",
        TECHNICAL,
    ),
    Request("Can you take admin rights away from Marcus? He only needs to edit things.", ACCOUNT),
    _ambiguous(
        "Can you remove Jorge from our team? No point paying for a seat nobody uses anymore.",
        ACCOUNT,
        BILLING,
    ),
    Request(
        "is it possible to get charged on the 1st of every month instead of the 17th? payday thing",
        BILLING,
    ),
    Request("The Zapier connection drops every few hours and our automations just silently stop.", TECHNICAL),
    Request(
        "Before my last day I'd like my comments anonymised, I don't want my name attached to them "
        "after I'm gone.",
        ACCOUNT,
    ),
    _ambiguous(
        "Our API key stopped working the same day our card payment bounced. Are these related??",
        BILLING,
        TECHNICAL,
    ),
    Request("Do you do any kind of deal if we commit to three years upfront?", BILLING),
    Request("printing from the web version cuts off the right side of every page", TECHNICAL),
    Request(
        "Good morning, could I see a list of everyone who has access to our workspace and what each "
        "of them is allowed to do? Our auditor is asking.",
        ACCOUNT,
    ),
    _ambiguous("The 'download my data' button gives me a zip file that is 0 bytes.", TECHNICAL, ACCOUNT),
    Request("Can I buy a subscription as a gift for my brother? His birthday is next week.", BILLING),
    Request(
        "Is there a way to make the Chrome extension work behind our corporate proxy? It just spins forever.",
        TECHNICAL,
    ),
    Request("We need a second owner on our organisation so we're not stuck when I'm on holiday.", ACCOUNT),
    _ambiguous(
        "Hi, my employer has paid for my licence until now but I'm leaving the company. Can I keep my "
        "account and start paying for it myself?",
        BILLING,
        ACCOUNT,
    ),
    Request(
        "Hi, Marguerite from Lyon. My husband and I each pay for our own plan, is there a family "
        "option that works out cheaper?",
        BILLING,
    ),
    Request("your python SDK throws a TypeError on import with python 3.12, works fine on 3.10", TECHNICAL),
    Request(
        "How do I stop my coworkers from seeing personal stuff on my profile, like my birthday?", ACCOUNT
    ),
    _ambiguous(
        "The app says 'device limit reached' when I try to sign in on my new laptop. I only have one "
        "other computer!",
        TECHNICAL,
    ),
    Request(
        "you took 79 euro from me when the free trial ended, i never agreed to keep it. GIVE IT BACK.",
        BILLING,
    ),
    Request(
        "Hello, I'm Ahmed. Timestamps in the activity log are all an hour off since the clocks changed "
        "on Sunday.",
        TECHNICAL,
    ),
    Request("Can we make it so only people with an @acme.io address can join our team?", ACCOUNT),
    _ambiguous(
        "Our accountant needs her own login so she can grab the receipts every month, but she "
        "shouldn't see any of our projects.",
        ACCOUNT,
    ),
    Request("What will I be paying once the introductory period is over? I don't like surprises.", BILLING),
    Request(
        "Images I paste into comments show up as a broken icon for my colleagues but look fine for me.",
        TECHNICAL,
    ),
    Request(
        "Hi! Could someone change my job title on my profile from 'Intern' to 'Junior Analyst'? It's "
        "greyed out for me. (Got the job, yay!)",
        ACCOUNT,
    ),
    _ambiguous(
        "I closed my account back in March, so why is money still coming out of my bank every month?",
        BILLING,
    ),
    Request(
        "We'd like to be invoiced on net-60 terms rather than paying up front. Is that something you "
        "offer larger customers?",
        BILLING,
    ),
    Request("Ctrl+K stopped doing anything after I updated yesterday.", TECHNICAL),
    Request("Under Article 15 GDPR I'd like to know what personal information you hold about me.", ACCOUNT),
    _ambiguous(
        "hello, the company name on our account is wrong and because of that it's wrong on every "
        "invoice too. please fix both",
        ACCOUNT,
        BILLING,
    ),
    Request("3 seats x $15 is $45, so why does my receipt say $54??", BILLING),
    Request(
        "pagination on /v2/items returns the same 50 records on every page, looks like the cursor is ignored",
        TECHNICAL,
    ),
    Request(
        "My son signed up using my name and details when he was 15. He's grown out of it and I want "
        "that account gone.",
        ACCOUNT,
    ),
    _ambiguous(
        "Every time I sign in I'm asked to pick a plan, even though we've been paying you for two years.",
        TECHNICAL,
        BILLING,
    ),
    Request("Does the Black Friday deal apply to existing customers when we renew?", BILLING),
    Request(
        "The app on my Pixel drains the battery like crazy, 30% in an hour just sitting in the background.",
        TECHNICAL,
    ),
    Request(
        "Guests in our workspace can see every single project. Can we limit them to just the one "
        "they're working on?",
        ACCOUNT,
    ),
    _ambiguous(
        "Hi, it's Grace. I have a question about my plan and also something weird is happening.",
        BILLING,
        TECHNICAL,
    ),
    Request(
        "Why is there a line called 'overage' on this month's bill?! Nobody here ever agreed to that.",
        BILLING,
    ),
    Request(
        "I'm stuck on the 'verifying your device' screen and it never finishes. Tried two browsers already.",
        TECHNICAL,
    ),
    Request("hey can u take my middle name off my profile, it shows up everywhere", ACCOUNT),
    _ambiguous(
        "Someone on my team keeps buying add-ons with the company card. Can I stop members from "
        "making purchases?",
        ACCOUNT,
    ),
    Request(
        "How long before the money shows up on my card after you process a return? It's been ten "
        "days and my wife keeps asking.",
        BILLING,
    ),
    Request("The undo button undoes two steps instead of one. I've lost work because of it.", TECHNICAL),
    Request(
        "We want to keep the account but wipe every project and start from scratch for the new season.",
        ACCOUNT,
    ),
    _ambiguous(
        "Our trial ended yesterday and now my teammates get an 'access denied' page on the shared "
        "board. How do we keep going?",
        BILLING,
    ),
    Request("When is my next renewal and how much will it be?", BILLING),
    Request(
        "Where is the desktop client for an M2 Mac? The download page only seems to have an Intel build.",
        TECHNICAL,
    ),
    Request(
        "Is there any way to see when each member of our team last signed in? We're doing an access review.",
        ACCOUNT,
    ),
    _ambiguous(
        "Our IT department wants the app on 40 machines. Does each install need its own licence?",
        BILLING,
    ),
    Request("do u charge extra for storage above 100gb or is that included", BILLING),
    Request(
        "The Google Sheets integration writes our numbers as text, so every formula downstream breaks.",
        TECHNICAL,
    ),
    Request(
        "Somebody here made a second workspace by accident. It's empty, could you get rid of it?", ACCOUNT
    ),
    _ambiguous(
        "I'm the only admin and I lost my phone with the authenticator app on it. Can one of my "
        "colleagues be made admin so the team isn't stuck?",
        ACCOUNT,
    ),
    Request("Our budget year ends in June. Can you send a pro forma so we can pay before then?", BILLING),
    Request("Vimeo embeds just show a black box on shared pages.", TECHNICAL),
    Request(
        "My daughter has been using my login. Can she have her own user under our family account?",
        ACCOUNT,
    ),
    _ambiguous(
        "Please unlink my Google sign-in from my account, I'd rather use a normal password.",
        ACCOUNT,
        TECHNICAL,
    ),
]
