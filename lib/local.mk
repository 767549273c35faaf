# lib/: utilities and file formats shared by server, client and engine:
# errors, logging, buffers, time, UTF-8, command tables, hashing, gzip/zlib,
# atomic files, config files, safe XML, Unix sockets, token files and
# tokenizers (bytes, GPT-2 BPE, Hugging Face tokenizer.json with its JSON
# reader and NFC), weight averaging. Nothing here depends on engine/.
noinst_LIBRARIES += lib/libctune.a
lib_libctune_a_CFLAGS = $(AM_CFLAGS) $(CT_DEP_CFLAGS)
lib_libctune_a_SOURCES = \
	lib/ct_err.c lib/ct_err.h \
	lib/ct_log.c lib/ct_log.h \
	lib/ct_options.c lib/ct_options.h \
	lib/ct_buf.c lib/ct_buf.h \
	lib/ct_array.c lib/ct_array.h \
	lib/ct_time.c lib/ct_time.h \
	lib/ct_le.h \
	lib/ct_utf8.c lib/ct_utf8.h \
	lib/ct_cmd.c lib/ct_cmd.h
lib_libctune_a_SOURCES += \
	lib/ct_avg.c lib/ct_avg.h \
	lib/ct_outer.c lib/ct_outer.h
lib_libctune_a_SOURCES += \
	lib/ct_hash.c lib/ct_hash.h \
	lib/ct_sign.c lib/ct_sign.h lib/ct_receipt.c lib/ct_receipt.h \
	lib/ct_chain.c lib/ct_chain.h \
	lib/ct_gzip.c lib/ct_gzip.h \
	lib/ct_zin.c lib/ct_zin.h \
	lib/ct_file.c lib/ct_file.h \
	lib/ct_conf.c lib/ct_conf.h \
	lib/ct_xml.c lib/ct_xml.h \
	lib/ct_clock.c lib/ct_clock.h
# The platform layer (lib/ct_os.h): POSIX or Windows.
lib_libctune_a_SOURCES += lib/ct_os.h
if CT_WINDOWS
lib_libctune_a_SOURCES += lib/ct_os_win.c lib/ct_os_win_sys.c
EXTRA_DIST += lib/ct_os_posix.c lib/ct_unix.c lib/ct_unix.h
else
lib_libctune_a_SOURCES += lib/ct_os_posix.c lib/ct_unix.c lib/ct_unix.h
EXTRA_DIST += lib/ct_os_win.c lib/ct_os_win_sys.c
endif
# JSON and .safetensors (Hugging Face model files; engine/ct_llama_hf.c)
lib_libctune_a_SOURCES += \
	lib/ct_jv.c lib/ct_jv.h \
	lib/ct_safetensors.c lib/ct_safetensors.h \
	lib/ct_hf_dtype.c lib/ct_hf_dtype.h
# GGUF files out (llama.cpp's format; engine/ct_gguf_model.c)
lib_libctune_a_SOURCES += \
	lib/ct_gguf.c lib/ct_gguf.h lib/ct_gguf_tok.c lib/ct_gguf_tok.h
lib_libctune_a_SOURCES += \
	lib/ct_tokens.c lib/ct_tokens.h lib/ct_tok.h \
	lib/ct_tokenizer.c lib/ct_tokenizer.h \
	lib/ct_bpe.c lib/ct_bpe.h lib/ct_bpe_int.h \
	lib/ct_bpe_load.c lib/ct_bpe_split.c lib/ct_bpe_hf.c lib/ct_bpe_post.c \
	lib/ct_nfc.c lib/ct_nfc.h lib/ct_nfc_tab.c \
	lib/ct_unicode.c lib/ct_unicode.h lib/ct_unicode_tab.c
# chat templates: a small Jinja interpreter (doc/chat.md)
lib_libctune_a_SOURCES += \
	lib/ct_jinja.h lib/ct_jinja_int.h lib/ct_jinja_parse.c \
	lib/ct_jinja_eval.c lib/ct_jinja_lib.c lib/ct_jinja_val.c \
	lib/ct_chat.c lib/ct_chat.h lib/ct_chat_mask.c lib/ct_chat_mask.h
