"""The fixed layout of the support desk's pages: one table the HTML and the pixel bots share.

Every control the pixel baselines touch sits at an absolute position in EffectBench's fixed
page frame (:mod:`effectbench.api.pages`: the 1024x640 viewport, the banner, the result rows),
so a recorded coordinate always lands on the same control (the way an RPA bot is recorded
against a fixed screen). The stylesheet is generated from these boxes
(:func:`effectbench_ticketing.web.app.stylesheet`), so the pages and the bots cannot drift
apart; a browser test checks each box against the rendered page.
"""

from __future__ import annotations

from effectbench.api import forms, pages
from effectbench_ticketing.db import AGENTS, SLA_PLANS

Box = pages.Box

# the search page
SEARCH_NAME = Box(24, 112, 300, 30)
SEARCH_DOMAIN = Box(340, 112, 200, 30)
SEARCH_CODE = Box(556, 112, 120, 30)
SEARCH_BUTTON = Box(692, 110, 110, 34)
OPEN_TICKET_ID = Box(826, 112, 80, 30)
OPEN_TICKET_BUTTON = Box(916, 110, 84, 34)

# the account page (its new-ticket form)
SUBJECT = Box(24, 176, 476, 30)
PRIORITY_RADIO = {
    "normal": Box(24, 224, 110, 24),
    "high": Box(140, 224, 100, 24),
    "urgent": Box(246, 224, 110, 24),
    "low": Box(362, 224, 90, 24),
}
"""One radio per priority the desk takes (:data:`~effectbench_ticketing.db.PRIORITIES`; the
first three where they always were, ``low`` after them)."""
DESCRIPTION = Box(24, 272, 476, 100)
CREDIT = Box(24, 388, 240, 24)
SLA_RADIO = {code: Box(24 + 106 * i, 424, 100, 24) for i, (code, _, _) in enumerate(SLA_PLANS)}
CREDIT_REF = Box(24, 468, 300, 30)
SAVE = Box(24, 516, 120, 36)
TICKET_LIST = Box(540, 176, 460, 440)

# the ticket page (its reassign form)
ASSIGNEE_RADIO = {
    agent_id: Box(24, 176 + 30 * i, 300, 24) for i, (agent_id, _, _) in enumerate(AGENTS)
}
COMMENT = Box(24, 340, 476, 100)
REASSIGN_SAVE = Box(24, 456, 120, 36)
COMMENT_LIST = Box(540, 176, 460, 440)

# What the controls are: one declaration the web pages and the desktop app both paint
# (:mod:`effectbench.kit.forms`), so a caption, an option or a box cannot differ between them.
_form = forms.Form
NAME_FIELD = forms.Entry("name", "Account name", SEARCH_NAME)
DOMAIN_FIELD = forms.Entry("domain", "Email domain", SEARCH_DOMAIN)
CODE_FIELD = forms.Entry("code", "Account code", SEARCH_CODE)
TICKET_FIELD = forms.Entry("id", "Open ticket #", OPEN_TICKET_ID)
SUBJECT_FIELD = forms.Entry("subject", "Subject", SUBJECT)
DESCRIPTION_FIELD = forms.Entry("description", "Description", DESCRIPTION, lines=5)
CREDIT_CHECK = forms.Check("credit", "Post the SLA credit", CREDIT, ("sla_code", "credit_ref"))
CREDIT_REF_FIELD = forms.Entry("credit_ref", "Credit reference", CREDIT_REF)
COMMENT_FIELD = forms.Entry("comment", "Handover comment", COMMENT, lines=5)
SEARCH = _form(
    "search",
    (NAME_FIELD, DOMAIN_FIELD, CODE_FIELD),
    forms.Button("Search", SEARCH_BUTTON),
    forms.Request("GET", "/api/customers?name={name}"),
    "list",
    filters=(("domain", "domain"), ("code", "id")),
)
OPEN_TICKET = _form(
    "open",
    (TICKET_FIELD,),
    forms.Button("Open", OPEN_TICKET_BUTTON),
    None,
    "open:ticket",
)
PRIORITY = forms.Choice(
    "priority", "Priority", tuple((p, p, box) for p, box in PRIORITY_RADIO.items())
)
SLA = forms.Choice("sla_code", "", tuple((code, code, box) for code, box in SLA_RADIO.items()))
NEW_TICKET = _form(
    "ticket",
    (SUBJECT_FIELD, PRIORITY, DESCRIPTION_FIELD, CREDIT_CHECK, SLA, CREDIT_REF_FIELD),
    forms.Button("Save", SAVE),
    forms.Request("POST", "/api/tickets"),
    "reload",
    context=(("customer_id", "{customer[id]}"), ("name", "{customer[name]}")),
    key="request_ref",
)
ASSIGNEE = forms.Choice(
    "assignee_id",
    "Assign to",
    tuple((a, f"{name} ({team})", ASSIGNEE_RADIO[a]) for a, name, team in AGENTS),
    always=True,
)
REASSIGN = _form(
    "reassign",
    (ASSIGNEE, COMMENT_FIELD),
    forms.Button("Save", REASSIGN_SAVE),
    forms.Request("POST", "/api/tickets/{id}/reassign"),
    "reload",
)
SUMMARY = Box(24, 92, 976, 60)
SCREENS = pages.screens(
    "Support desk",
    "#37474f",
    (
        forms.View(
            "search",
            None,
            (SEARCH, OPEN_TICKET),
            listing=forms.Listing(
                "results",
                "{name} \u00b7 {domain} \u00b7 account {id}",
                pages.RESULT_ROW,
                pages.RESULT_STEP,
                10,
                opens=("account", "{id}"),
                empty="No account matches.",
            ),
            idle="Search for an account",
        ),
        forms.View(
            "account",
            forms.Request("GET", "/api/customers/{id}"),
            (NEW_TICKET,),
            (
                "{customer[name]} \u00b7 {customer[domain]} \u00b7 account {customer[id]}",
                "Plan: {customer[plan]} \u00b7 contact {customer[contact_email]}",
            ),
            SUMMARY,
            forms.Listing(
                "tickets",
                "#{id}   {subject}   {priority}   {status}",
                TICKET_LIST,
                20,
                20,
                heading="#   Subject   Priority   Status",
            ),
        ),
        forms.View(
            "ticket",
            forms.Request("GET", "/api/tickets/{id}"),
            (REASSIGN,),
            (
                "Ticket #{ticket[id]} \u00b7 {ticket[subject]} \u00b7 account "
                "{ticket[customer_id]}",
                "Priority {ticket[priority]} \u00b7 {ticket[status]} \u00b7 assigned to "
                "{ticket[assignee_id]}",
            ),
            SUMMARY,
            forms.Listing(
                "comments", "{author_id}: {body}", COMMENT_LIST, 20, 20, heading="By   Comment"
            ),
        ),
    ),
    none="nobody",
)
"""The desk's screens, declared once (the desktop app is built from this alone)."""
