"""One module per lesson that needs code of its own; each names its lesson in its first docstring line.

prompt_caching (03), ttl (04), metadata_filtering (06), citations (07), measure (08), rag_lab (10).
Lessons 00-02 and 05 use :mod:`ctxlab.costs` directly; 09 uses :mod:`ctxlab.quiz`. A lab module
builds on everything below it (costs, corpus, retrieval, sandbox, api) and never on another
lab's internals; its figures are in :mod:`ctxlab.plots`.
"""
