"""The arm-facing handle: every action and every product read goes over HTTP.

:class:`TicketingEnv` is what a system under test holds on the ``api`` substrate (EffectBench's
:class:`~effectbench.api.HttpEnv`): one keep-alive connection to the support desk service on
127.0.0.1, carrying the episode's secret, which the handle never hands out. It offers:

* actions ``find_customers(name)``, ``open_account(customer_id)``, ``open_ticket(ticket_id)``,
  ``create_ticket(customer_id, name, subject, priority, description, request_ref=None,
  credit=False, sla_code=None, credit_ref=None)`` and ``reassign_ticket(ticket_id,
  assignee_id, comment)``;
* the banner the app painted last;
* the product's own readback of one REST surface, the tickets endpoint, and a readback over
  every REST surface (what ``effect_verified_all`` uses).

Neither readback is the harness oracle: both read through the service, as the app's role.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from effectbench.api import Action, ActionParam, HttpEnv
from effectbench_ticketing.db import SURFACES

TICKET = ActionParam("ticket_id", ("integer", "string"), "The ticket's number.")
CREATE_PARAMS = (
    ActionParam("customer_id", "string", "The account's id."),
    ActionParam("name", "string", "The customer's name as the account shows it."),
    ActionParam("subject", "string", "The ticket's subject."),
    ActionParam("priority", "string", "low, normal, high or urgent."),
    ActionParam("description", "string", "What the customer reported."),
    ActionParam("request_ref", "string", "The request's reference (one ticket per).", False),
    ActionParam("credit", "boolean", "Also post the SLA credit owed.", False),
    ActionParam("sla_code", "string", "The SLA missed (with credit).", False),
    ActionParam("credit_ref", "string", "The credit's reference (with credit).", False),
)
ACTIONS = {
    "find_customers": Action(
        "GET",
        "/api/customers?name={name}",
        (ActionParam("name", "string", "The customer's name, or part of it."),),
    ),
    "open_account": Action(
        "GET",
        "/api/customers/{customer_id}",
        (ActionParam("customer_id", "string", "The account's id (C-1001...)."),),
    ),
    "open_ticket": Action("GET", "/api/tickets/{ticket_id}", (TICKET,)),
    "create_ticket": Action(
        "POST", "/api/tickets", CREATE_PARAMS, body=tuple(p.name for p in CREATE_PARAMS)
    ),
    "reassign_ticket": Action(
        "POST",
        "/api/tickets/{ticket_id}/reassign",
        (
            TICKET,
            ActionParam("assignee_id", "string", "The agent to hand it to (A-02...)."),
            ActionParam("comment", "string", "The handover comment."),
        ),
        body=("assignee_id", "comment"),
        fill=True,
    ),
}
"""The desk's actions: what each sends to the service, and its typed arguments."""
PARAMETERS = {name: action.params for name, action in ACTIONS.items()}
"""The named arguments of each action (what an agent's typed tools declare)."""


class TicketingEnv(HttpEnv):
    """The SUT's handle on one episode: actions and reads over HTTP, nothing else."""

    ACTIONS = ACTIONS
    PRODUCT_SURFACES = ("tickets",)
    SURFACES = SURFACES
    SERVICE = "support desk"

    def opening(self, brief: Mapping[str, Any]) -> str:
        """The request: whose account and a new ticket (or which ticket goes to whom)."""
        if "ticket_id" in brief:
            agent = brief.get("assignee_id", "?")
            return f"Task: hand ticket #{brief['ticket_id']} to agent {agent}"
        code = f", account {brief['customer_id']}" if brief.get("customer_id") else ""
        customer = brief.get("customer_name", "?")
        return f"Request: {customer} ({brief.get('domain', '')}{code}); new ticket"
