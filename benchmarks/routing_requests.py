"""Customer requests for the routing evaluation (``benchmarks/local_routing.py``), each with the
specialist it belongs to.

Three specialists: ``billing`` (money), ``technical_support`` (something does not work) and ``account``
(the account itself: its email, name, members, data, closing it). The requests are written as customers
write: greetings, names, typos, several sentences, indirect wording. The ambiguous ones touch more than
one area; their label is the specialist who can act on what the customer asks for, and a few, where two
specialists would both be a fair answer, accept either.

``TUNING`` is the set prompts and schemas were tuned on. ``HELD_OUT`` was written at the same time and
run only once the tuning was done: its figure is the one that says how well routing generalizes.
"""

from __future__ import annotations

from dataclasses import dataclass

BILLING = "billing"
TECHNICAL = "technical_support"
ACCOUNT = "account"
SPECIALISTS = (BILLING, TECHNICAL, ACCOUNT)


@dataclass(frozen=True)
class Request:
    """A customer's first message and the specialist(s) it should be handed to."""

    text: str
    expected: str
    also: tuple[str, ...] = ()
    """Other specialists that are a fair answer too (ambiguous requests only)."""
    ambiguous: bool = False

    def accepts(self, specialist: str) -> bool:
        return specialist == self.expected or specialist in self.also


def _ambiguous(text: str, expected: str, *also: str) -> Request:
    return Request(text, expected, also, ambiguous=True)


TUNING: list[Request] = [
    # billing
    Request("I was charged twice for my subscription this month.", BILLING),
    Request("Can I get a refund for the annual plan I bought by mistake yesterday?", BILLING),
    Request("Where do I download the invoice for my March payment? My accountant needs it.", BILLING),
    Request("My credit card expired. How do I update the card you charge?", BILLING),
    Request("Why did my monthly bill go up from $29 to $39?", BILLING),
    Request("Please cancel my subscription, I don't need it anymore.", BILLING),
    Request("I'm a student, is there a discount on the Pro plan?", BILLING),
    Request(
        "hi, this is Priya. we want to move from the Team plan to Enterprise, what would it cost?", BILLING
    ),
    Request("We need our company's VAT number on all receipts.", BILLING),
    Request("Do you accept PayPal or only credit cards?", BILLING),
    Request("there is a charge of 49.00 from you on my statement that I don't recognise", BILLING),
    Request("Can we pay yearly by bank transfer instead of card?", BILLING),
    Request("I cancelled last week but I was still billed today.", BILLING),
    Request("How much is it to add five more seats to our plan?", BILLING),
    Request("Hello! Our finance team needs a quote in EUR for 20 licences.", BILLING),
    # technical support
    Request("The desktop app crashes every time I export a PDF.", TECHNICAL),
    Request("I can't log in, it says 'invalid token' even after resetting my password.", TECHNICAL),
    Request("Your API has been returning 502 errors since this morning.", TECHNICAL),
    Request("Sync between my phone and my laptop stopped working two days ago.", TECHNICAL),
    Request("The installer fails on Windows 11 with error 0x80070005.", TECHNICAL),
    Request("The dashboard takes over a minute to load any page.", TECHNICAL),
    Request("Since the latest update the app won't even open on my Mac.", TECHNICAL),
    Request("The export button does nothing in Firefox, but it works in Chrome.", TECHNICAL),
    Request("Hey, Tom here. The password reset email never arrives, I checked spam too.", TECHNICAL),
    Request("Webhooks stopped firing for new orders yesterday around 5pm.", TECHNICAL),
    Request("the android app shows a blank white screen after the splash", TECHNICAL),
    Request("Uploading files bigger than 10 MB always fails halfway.", TECHNICAL),
    Request("Our SSO login with Okta started failing with a SAML error.", TECHNICAL),
    Request("Notifications come three hours late on iOS.", TECHNICAL),
    Request("Good morning. Search returns no results even for documents I just created.", TECHNICAL),
    # account
    Request("I want to change the email address on my account.", ACCOUNT),
    Request("Please add my colleague jana@example.com to our team workspace.", ACCOUNT),
    Request("How do I delete my account and all my data?", ACCOUNT),
    Request("I got married, can you change my last name on the account?", ACCOUNT),
    Request("We need an export of all our data for a GDPR request.", ACCOUNT),
    Request("Transfer ownership of our workspace to my coworker Ben, I'm leaving the company.", ACCOUNT),
    Request("Remove a former employee from our team, she left last month.", ACCOUNT),
    Request("Can I have two separate accounts with the same email?", ACCOUNT),
    Request("How do I make someone on my team an admin?", ACCOUNT),
    Request("Hi, I'd like to merge my two accounts into one.", ACCOUNT),
    Request("Please update our company name from Foo Ltd to Foo Group.", ACCOUNT),
    Request("where can i change the language and time zone of my profile", ACCOUNT),
    Request("I want to close the account of my late father. What do you need from me?", ACCOUNT),
    Request("Can you tell me which email my account is registered under? I have several.", ACCOUNT),
    Request("Turn off the marketing emails for everyone on our team, please.", ACCOUNT),
    # ambiguous
    _ambiguous("I can't log in to download my invoice, it keeps saying wrong password.", TECHNICAL),
    _ambiguous("My card was declined at checkout but my bank says nothing is wrong.", BILLING),
    _ambiguous("I want to close my account and get a refund for the rest of the year.", ACCOUNT, BILLING),
    _ambiguous("The invoice PDF you emailed me won't open, it says the file is damaged.", TECHNICAL),
    _ambiguous("I changed my email but now the receipts still go to my old address.", ACCOUNT, BILLING),
    _ambiguous("After upgrading to Pro the new features still don't show up.", TECHNICAL),
    _ambiguous(
        "Someone logged into my account from another country, I think I was hacked!", TECHNICAL, ACCOUNT
    ),
    _ambiguous("Hi, quick question about my account.", ACCOUNT),
    _ambiguous("Why am I paying for 12 seats when only 8 people are on our team?", BILLING),
    _ambiguous("My colleague can't accept the invite to our workspace, the link gives an error.", TECHNICAL),
    _ambiguous("I deleted a team member by mistake, can you bring them back?", ACCOUNT),
    _ambiguous("I'm leaving, what happens to my data and my last payment?", ACCOUNT, BILLING),
    _ambiguous("The app says my trial expired but I paid yesterday.", BILLING),
    _ambiguous("Can I use the API on the free plan or do I need to pay?", BILLING),
    _ambiguous("Two-factor codes never arrive by SMS, so I'm locked out.", TECHNICAL),
]

HELD_OUT: list[Request] = [
    # billing
    Request("Could you send me a copy of last year's invoices? All twelve of them.", BILLING),
    Request("I was promised 20% off for the first year but paid full price.", BILLING),
    Request("How do I switch from monthly to annual billing?", BILLING),
    Request("Is there a nonprofit discount? We're a registered charity.", BILLING),
    Request("hello, please stop charging my card, I want to end my plan", BILLING),
    Request("The price on your website is lower than what I'm paying.", BILLING),
    Request("Our purchase order number must be on the invoice or accounting rejects it.", BILLING),
    Request("I want my money back, the product didn't do what was advertised.", BILLING),
    Request("Can I pause my subscription for two months while I travel?", BILLING),
    Request("Why was I charged sales tax? We're tax exempt.", BILLING),
    Request("Hi, I'm Leo. What's the difference in price between Pro and Business?", BILLING),
    Request("I need a receipt with my company address for my expense report.", BILLING),
    Request("You charged me in dollars but I live in Canada, can I pay in CAD?", BILLING),
    Request("Downgrade us to the free tier at the end of this billing period please.", BILLING),
    Request("I see three pending charges of $1 on my card from you, what are they?", BILLING),
    # technical support
    Request("The app freezes when I open a project with many images.", TECHNICAL),
    Request("I keep getting 'session expired' every five minutes.", TECHNICAL),
    Request("Your REST API returns 401 with a key I just created.", TECHNICAL),
    Request("Calendar sync with Outlook duplicates every event.", TECHNICAL),
    Request("The Linux .deb package won't install on Ubuntu 24.04, dependency error.", TECHNICAL),
    Request("Pages render with broken fonts since yesterday's release.", TECHNICAL),
    Request("hi its sam, the iPad app crashes when i rotate the screen", TECHNICAL),
    Request("Charts in the reports show no data although the table has rows.", TECHNICAL),
    Request("The CSV import says 'unexpected column' but the file matches your template.", TECHNICAL),
    Request("I can't connect the Slack integration, it loops back to the login page.", TECHNICAL),
    Request("Everything is really slow today, is something down?", TECHNICAL),
    Request("Copy and paste doesn't work in the editor on Safari.", TECHNICAL),
    Request("My rate limit seems to be 10 requests a minute instead of 100.", TECHNICAL),
    Request("The Windows app asks me to log in again every single time I open it.", TECHNICAL),
    Request("Dark mode makes some buttons invisible.", TECHNICAL),
    # account
    Request("Please change the account owner email to finance@example.org.", ACCOUNT),
    Request("How can I invite an external contractor with limited access?", ACCOUNT),
    Request("Delete my profile, I don't want you to keep my personal information.", ACCOUNT),
    Request("I need to rename our workspace to reflect our new brand.", ACCOUNT),
    Request("Can you download everything we stored with you into a zip for our archive?", ACCOUNT),
    Request("hi, my username has a typo, can it be fixed?", ACCOUNT),
    Request("We're merging two departments, can we combine their workspaces?", ACCOUNT),
    Request("How do I remove myself from a team I was added to by mistake?", ACCOUNT),
    Request("Please deactivate the accounts of the three interns whose internship ended.", ACCOUNT),
    Request("Who is the admin of our company account? I need access rights.", ACCOUNT),
    Request("I'd like to change the phone number on my profile.", ACCOUNT),
    Request("Can I move my personal projects from my work account to a private account?", ACCOUNT),
    Request("Set our team's default role for new members to viewer.", ACCOUNT),
    Request("I want to reopen the account I closed last month.", ACCOUNT),
    Request("Could you update my profile picture? The upload page is confusing.", ACCOUNT),
    # ambiguous
    _ambiguous("I upgraded my plan but the app still shows the free limits and an error banner.", TECHNICAL),
    _ambiguous("The payment page shows a 500 error when I try to renew.", TECHNICAL, BILLING),
    _ambiguous("Close my account, and make sure I'm not charged again.", ACCOUNT, BILLING),
    _ambiguous("The receipt email bounced because my address changed, please update it.", ACCOUNT),
    _ambiguous("I forgot which card I used to pay, and I can't log in to check.", TECHNICAL, BILLING),
    _ambiguous("We added two new colleagues, how does that change our bill?", BILLING),
    _ambiguous("My account was suspended, I think because a payment failed.", BILLING),
    _ambiguous("Can I get a refund? The app has been broken for a week.", BILLING),
    _ambiguous("The password reset link says my account doesn't exist.", TECHNICAL, ACCOUNT),
    _ambiguous("I need to change the billing contact for our company to our new CFO.", BILLING, ACCOUNT),
    _ambiguous("Hello, I have a problem.", TECHNICAL, BILLING, ACCOUNT),
    _ambiguous("Is my data stored in the EU? Our legal team is asking.", ACCOUNT),
    _ambiguous("The team member limit blocks me from adding people even though we paid for more.", BILLING),
    _ambiguous("My old colleague's invoices still show her name as the contact.", BILLING),
    _ambiguous("I got an email saying my account will be deleted, is that a scam?", ACCOUNT, TECHNICAL),
]
