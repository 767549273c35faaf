# server/ rules (included by the top-level Makefile.am)
