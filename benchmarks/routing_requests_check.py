"""A fifth set of customer requests for the routing evaluation (``benchmarks/local_routing.py``).

``CHECK`` was written once the calibration of the names' probabilities was settled (on the other four
sets), by someone who had not seen the model's answers to any of its requests, and is run once with
the rule fixed, to check whether calibration helps on requests nobody chose it on. It follows the
format and the labelling rules of ``benchmarks/routing_requests.py``: 15 requests for each specialist
and 15 ambiguous ones, whose label is the specialist who can act on what the customer asks for, with
``also`` naming any other specialist that would be a fair answer.
"""

from __future__ import annotations

from benchmarks.routing_requests import ACCOUNT, BILLING, TECHNICAL, Request, _ambiguous

CHECK: list[Request] = [
    # billing
    Request("Hey, I got two receipts for the same order number this morning. Was I charged twice?", BILLING),
    Request("Is the price on your website with or without sales tax? I'm in Texas.", BILLING),
    Request(
        "Our purchase order number has to appear on the invoice, otherwise accounts payable won't pay it.",
        BILLING,
    ),
    Request("Our nonprofit was promised 50% off but the renewal came through at full price.", BILLING),
    Request(
        "I'd like my money back for the last three months, I haven't used the service since I changed jobs.",
        BILLING,
    ),
    Request(
        "can i switch from monthly to annual billing and get credit for what i already paid this month",
        BILLING,
    ),
    Request(
        "What happens to my bill if I downgrade from Business to Starter halfway through the cycle?", BILLING
    ),
    Request(
        "The payment failed because my bank flagged it. Can you retry the charge now that I've cleared it?",
        BILLING,
    ),
    Request("Do you offer invoicing with 30-day payment terms for larger teams?", BILLING),
    Request("We were quoted $12 per user but we're paying $15. Can someone explain?", BILLING),
    Request("I need a copy of every invoice from 2025 for our audit, as PDFs please.", BILLING),
    Request("Is there any way to pay in Japanese yen?", BILLING),
    Request("My trial turned into a paid plan without any warning and I want that charge reversed.", BILLING),
    Request("How do I stop the automatic renewal? I want the plan to just run out in June.", BILLING),
    Request("Good morning, does the education discount apply to teachers as well as students?", BILLING),
    # technical support
    Request("The mobile app crashes as soon as I open the calendar tab. iPhone 15, latest iOS.", TECHNICAL),
    Request(
        "Uploads get stuck at 99% and then fail with 'network error', but my internet is fine.", TECHNICAL
    ),
    Request(
        "Since yesterday the search returns nothing at all, even for files I can see in the folder.",
        TECHNICAL,
    ),
    Request(
        "Our webhook stopped firing after your update last night. Nothing changed on our side.", TECHNICAL
    ),
    Request(
        "Hi, Tomasz here. The export to CSV gives me a file with all the accents broken, like Ã© instead "
        "of é.",
        TECHNICAL,
    ),
    Request("Dark mode makes half the buttons invisible in the desktop app.", TECHNICAL),
    Request("I click 'Sign in with Google' and the page just reloads, over and over.", TECHNICAL),
    Request("API requests return 429 even though we're way under the rate limit of our plan.", TECHNICAL),
    Request("Notifications come through about an hour late on Android.", TECHNICAL),
    Request("the editor freezes for about ten seconds every time I paste a table from Excel", TECHNICAL),
    Request("Sync between my laptop and my phone has been stuck on 'preparing' since Monday.", TECHNICAL),
    Request("Printing a report cuts off the right-hand column on every page.", TECHNICAL),
    Request("The browser extension says it can't connect, even right after I reinstalled it.", TECHNICAL),
    Request("Shared links open a blank page for people outside our company.", TECHNICAL),
    Request("My keyboard shortcuts stopped working after I changed the app language to German.", TECHNICAL),
    # account
    Request("I got married and want to change the surname on my profile.", ACCOUNT),
    Request("Please delete my account and all the data you hold about me.", ACCOUNT),
    Request(
        "How do I change the email address I log in with? The old one is my previous employer's.", ACCOUNT
    ),
    Request(
        "Can you tell me which personal data you've stored about me? I'm making a GDPR request.", ACCOUNT
    ),
    Request(
        "I need to remove a former employee from our workspace so she can't see our projects anymore.",
        ACCOUNT,
    ),
    Request(
        "Is it possible to merge my two accounts? I accidentally signed up twice with different emails.",
        ACCOUNT,
    ),
    Request("Our team lead left; how do we make someone else the admin of the workspace?", ACCOUNT),
    Request("I'd like to change my username, it still has a typo from when I signed up.", ACCOUNT),
    Request("Can I download everything from my account before I close it?", ACCOUNT),
    Request(
        "Please close the account registered under lena.fischer@example.com, I no longer need it.", ACCOUNT
    ),
    Request("How do I invite three colleagues to my workspace as viewers only?", ACCOUNT),
    Request("Can I change the time zone and language on my profile? Everything shows in US format.", ACCOUNT),
    Request(
        "Someone else's phone number is on my account as the recovery number, please take it off.", ACCOUNT
    ),
    Request("We'd like to rename our workspace from 'Acme Test' to 'Acme Design'.", ACCOUNT),
    Request("How long do you keep my data after I delete my account?", ACCOUNT),
    # ambiguous
    _ambiguous(
        "I deleted my account by mistake last week and I'm still being charged. Can you stop the charges?",
        BILLING,
    ),
    _ambiguous("The checkout page throws an error when I try to upgrade to Pro.", TECHNICAL, BILLING),
    _ambiguous(
        "I can't log in anymore because my email changed; can you update it so I can get back in?",
        ACCOUNT,
        TECHNICAL,
    ),
    _ambiguous(
        "My invoice shows my old company name. Can you change the name on the account so future "
        "invoices are right?",
        ACCOUNT,
        BILLING,
    ),
    _ambiguous("We removed two members from the workspace, will our bill go down automatically?", BILLING),
    _ambiguous(
        "The app logged me out and now says my subscription has expired, but I paid yesterday.",
        BILLING,
        TECHNICAL,
    ),
    _ambiguous(
        "I want to move my paid plan over to my colleague's account when I leave the company.",
        ACCOUNT,
        BILLING,
    ),
    _ambiguous("The 'Download invoice' button does nothing when I click it.", TECHNICAL, BILLING),
    _ambiguous(
        "Can I close my account but still get a receipt for the final month's payment?", ACCOUNT, BILLING
    ),
    _ambiguous(
        "Password reset emails never arrive, so I can't get into the account to update my card.",
        TECHNICAL,
        ACCOUNT,
    ),
    _ambiguous(
        "Our admin left and nobody can see the billing page anymore; can you make me the owner?",
        ACCOUNT,
        BILLING,
    ),
    _ambiguous("I was charged for 12 seats but the member list only shows 9 people.", BILLING, ACCOUNT),
    _ambiguous("The data export that comes with the Enterprise plan times out every time.", TECHNICAL),
    _ambiguous(
        "If I switch my account to a personal one, will the team discount still apply?", BILLING, ACCOUNT
    ),
    _ambiguous("I keep getting an error when adding a new user to our team.", TECHNICAL, ACCOUNT),
]
