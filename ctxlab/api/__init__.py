"""Talking to the Messages API: the client (real or sandbox), token counts, request building, the budget.

:mod:`~ctxlab.api.client` chooses the real API or the offline sandbox; :mod:`~ctxlab.api.tokens`
counts with ``count_tokens`` or the offline estimate; :mod:`~ctxlab.api.messages` builds requests
over documents; :mod:`~ctxlab.api.budget` holds the kernel's budget, which every online client enforces on its requests
(:mod:`~ctxlab.api._metered`, against the ledger of :mod:`~ctxlab.api._ledger`); :mod:`~ctxlab.api.online`
says what each lesson costs online (a measured table), reads the small-budget choices (``CTXLAB_MODEL``,
``CTXLAB_QUESTIONS``) and labels where a printed figure comes from (real API or sandbox).
"""
