# doc/ rules (included by the top-level Makefile.am)
dist_doc_DATA += doc/internals-lib.md
dist_doc_DATA += doc/workunit.md
