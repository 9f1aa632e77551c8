"""Collecting from nbgrader's exchange without following links (the JupyterHub collect path).

On JupyterHub every learner writes their own submission folder into the exchange (``nbgrader
submit``, or by hand: the inbound folder is writable by every account), and the grading
account's ``nbgrader collect`` copies it with ``shutil.copytree``, which follows symbolic
links: a ``timestamp.txt`` or ``submission_secret.txt`` that links to the grader's ``.env``,
or a notebook that links to ``solutions/`` or to another learner's notebook, was read and
copied as the grader. :class:`SafeExchangeCollect` (``c.ExchangeFactory.collect`` in
nbgrader_config.py, which every grading root copies) first copies each submission into a
private folder with :func:`~ctxlab.grading._files.copy_tree`, which never follows a link, then
lets nbgrader copy that folder (its ignore, include and size rules unchanged). Each link is a
warning in collect's log naming the learner's path; its target is never read nor shown.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect

from ctxlab.grading._files import copy_tree


class SafeExchangeCollect(ExchangeCollect):
    """nbgrader's collect, copying a submission without following any link in it."""

    def do_copy(self, src, dest, log=None):
        src = Path(src)
        with tempfile.TemporaryDirectory(prefix="ctxlab-collect-") as tmp:
            clean = Path(tmp) / src.name
            links, skipped = copy_tree(src, clean)
            for rel in links:
                where = src.name if rel == src.name else f"{src.name}/{rel}"
                self.log.warning("Not collected: %s is a symbolic link (links are never followed)", where)
            for rel, why in skipped:
                self.log.warning("Not collected: %s/%s: %s", src.name, rel, why)
            if not clean.is_dir():
                return
            super().do_copy(str(clean), dest, log)
