# doc/ rules (included by the top-level Makefile.am)
dist_doc_DATA += doc/internals-lib.md doc/internals-data.md doc/internals-server.md doc/internals-client.md
dist_doc_DATA += doc/workunit.md
dist_doc_DATA += doc/credit.md doc/results.md doc/validation.md doc/receipts.md
dist_doc_DATA += doc/protocol.md doc/operator.md
dist_doc_DATA += doc/volunteer.md doc/install.md
dist_doc_DATA += doc/web.md
dist_doc_DATA += doc/tokenizers.md
dist_doc_DATA += doc/llama.md
dist_doc_DATA += doc/chat.md
