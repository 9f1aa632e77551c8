"""Grading the course's answers: the rule grader, the model judge, the labelled answers and agreement.

``ctxlab.grading`` grades learners' notebooks; this package grades the answers that lesson 08's
methods (long context, metadata filter, RAG) give to the field questions:

* :mod:`ctxlab.evaluation.levels` -- the three levels, :class:`Graded` (one graded answer) and :func:`accuracy`;
* :mod:`ctxlab.evaluation.rules` -- the rule grader (:func:`grade`) and what it reads in an answer;
* :mod:`ctxlab.evaluation.agreement` -- agreement of two graders: confusion matrix and Cohen's kappa.
"""
from ctxlab.evaluation.agreement import Agreement, agreement
from ctxlab.evaluation.levels import LEVELS, Graded, accuracy
from ctxlab.evaluation.rules import (NOT_COVERED, SUPERSEDED, facts_found, grade, normalize, says_not_covered,
                                     stale_stated, states_a_rule)

__all__ = ["LEVELS", "Graded", "accuracy", "Agreement", "agreement", "NOT_COVERED", "SUPERSEDED", "normalize",
           "facts_found", "stale_stated", "says_not_covered", "states_a_rule", "grade"]
