"""Grading the course's answers: the rule grader, the model judge, the labelled answers and agreement.

``ctxlab.grading`` grades learners' notebooks; this package grades the answers that lesson 08's
methods (long context, metadata filter, RAG) give to the field questions:

* :mod:`ctxlab.evaluation.levels` -- the three levels, :class:`Graded` (one graded answer) and :func:`accuracy`;
* :mod:`ctxlab.evaluation.rules` -- the rule grader (:func:`grade`) and what it reads in an answer;
* :mod:`ctxlab.evaluation._agreement` -- agreement of two graders: confusion matrix and Cohen's kappa
  (:func:`compare`, :func:`cohen_kappa`, :func:`agreement`);
* :mod:`ctxlab.evaluation.labelled` -- the labelled answers (schema, loader) and a grader measured on them;
* :mod:`ctxlab.evaluation.judge` -- Claude as a judge (rubric in a cached prefix, JSON schema output, budget);
* :mod:`ctxlab.evaluation.uncertainty` -- an accuracy's interval widened by the grader's measured error.
"""
from ctxlab.evaluation._agreement import LEVEL_JA, Agreement, agreement, cohen_kappa, compare
from ctxlab.evaluation.levels import LEVELS, Graded, accuracy
from ctxlab.evaluation.rules import (NOT_COVERED, SUPERSEDED, facts_found, grade, normalize, says_not_covered,
                                     stale_stated, states_a_claim, states_a_rule)

__all__ = ["LEVELS", "Graded", "accuracy", "LEVEL_JA", "Agreement", "agreement", "compare", "cohen_kappa",
           "NOT_COVERED", "SUPERSEDED", "normalize", "facts_found", "stale_stated", "says_not_covered",
           "states_a_rule", "states_a_claim", "grade"]
