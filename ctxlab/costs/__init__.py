"""What answering costs: the price table, a response's usage, the cost formulas and the comparisons.

:mod:`~ctxlab.costs.pricing` (dated prices, dollars per call and month), :mod:`~ctxlab.costs.usage`
(the one reader of ``usage``), :mod:`~ctxlab.costs.formulas` (the relative model: k, rho, w, r),
:mod:`~ctxlab.costs.compare` (the course's comparison table) and :mod:`~ctxlab.costs.crossover`
(lesson 05: where the paths cross).
"""
