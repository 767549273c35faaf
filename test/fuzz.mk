# Fuzzing of the parsers that read what a peer or an operator sends: result
# files (delta), .safetensors, tokenizer.json, token files, model
# checkpoints (gpt2), a Hugging Face model's config.json (hfconfig), chat
# templates (jinja), chat JSONL lines (chatline) and the requests the
# client's control page reads (webhttp, client/cl_web_http.c). Each
# harness test/fuzz/fuzz_<name>.c is built twice: here, with the ordinary
# compiler and test/fuzz/replay.c, as the test test/fuzz/replay_<name>,
# which feeds it every file of test/fuzz/corpus/<name>/ (the seeds and
# each input that once broke the parser) in seconds; and by tools/fuzz,
# with clang's libFuzzer, ASan and UBSan, as test/fuzz/fuzz_<name>
# (EXTRA_PROGRAMS: built only when named, linked with $(CT_FUZZ_LDFLAGS),
# which tools/fuzz sets to -fsanitize=fuzzer). All link the default LDADD
# (test/local.mk).
CT_FUZZ_REPLAYS = test/fuzz/replay_delta test/fuzz/replay_safetensors \
	test/fuzz/replay_tokenizer test/fuzz/replay_tokens test/fuzz/replay_gpt2 \
	test/fuzz/replay_hfconfig test/fuzz/replay_jinja test/fuzz/replay_chatline \
	test/fuzz/replay_webhttp
check_PROGRAMS += $(CT_FUZZ_REPLAYS)
TESTS += $(CT_FUZZ_REPLAYS)
EXTRA_PROGRAMS = test/fuzz/fuzz_delta test/fuzz/fuzz_safetensors \
	test/fuzz/fuzz_tokenizer test/fuzz/fuzz_tokens test/fuzz/fuzz_gpt2 \
	test/fuzz/fuzz_hfconfig test/fuzz/fuzz_jinja test/fuzz/fuzz_chatline \
	test/fuzz/fuzz_webhttp
EXTRA_DIST += test/fuzz/corpus test/fuzz/json.dict tools/fuzz
CT_FUZZ_COMMON = test/fuzz/fuzz.h test/fuzz/fuzz_file.c

test_fuzz_replay_delta_SOURCES = test/fuzz/replay.c test/fuzz/fuzz_delta.c \
	test/fuzz/fuzz_delta.h $(CT_FUZZ_COMMON)
test_fuzz_replay_delta_CFLAGS = $(AM_CFLAGS) -DCT_FUZZ_NAME='"delta"'
test_fuzz_replay_safetensors_SOURCES = test/fuzz/replay.c test/fuzz/fuzz_safetensors.c \
	$(CT_FUZZ_COMMON)
test_fuzz_replay_safetensors_CFLAGS = $(AM_CFLAGS) -DCT_FUZZ_NAME='"safetensors"'
test_fuzz_replay_tokenizer_SOURCES = test/fuzz/replay.c test/fuzz/fuzz_tokenizer.c \
	$(CT_FUZZ_COMMON)
test_fuzz_replay_tokenizer_CFLAGS = $(AM_CFLAGS) -DCT_FUZZ_NAME='"tokenizer"'
test_fuzz_replay_tokens_SOURCES = test/fuzz/replay.c test/fuzz/fuzz_tokens.c $(CT_FUZZ_COMMON)
test_fuzz_replay_tokens_CFLAGS = $(AM_CFLAGS) -DCT_FUZZ_NAME='"tokens"'
test_fuzz_replay_gpt2_SOURCES = test/fuzz/replay.c test/fuzz/fuzz_gpt2.c $(CT_FUZZ_COMMON)
test_fuzz_replay_gpt2_CFLAGS = $(AM_CFLAGS) -DCT_FUZZ_NAME='"gpt2"'
test_fuzz_replay_hfconfig_SOURCES = test/fuzz/replay.c test/fuzz/fuzz_hfconfig.c \
	$(CT_FUZZ_COMMON)
test_fuzz_replay_hfconfig_CFLAGS = $(AM_CFLAGS) -DCT_FUZZ_NAME='"hfconfig"'
test_fuzz_replay_jinja_SOURCES = test/fuzz/replay.c test/fuzz/fuzz_jinja.c $(CT_FUZZ_COMMON)
test_fuzz_replay_jinja_CFLAGS = $(AM_CFLAGS) -DCT_FUZZ_NAME='"jinja"'
test_fuzz_replay_chatline_SOURCES = test/fuzz/replay.c test/fuzz/fuzz_chatline.c \
	$(CT_FUZZ_COMMON)
test_fuzz_replay_chatline_CFLAGS = $(AM_CFLAGS) -DCT_FUZZ_NAME='"chatline"'
test_fuzz_replay_webhttp_SOURCES = test/fuzz/replay.c test/fuzz/fuzz_webhttp.c \
	$(CT_FUZZ_COMMON)
test_fuzz_replay_webhttp_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/client -DCT_FUZZ_NAME='"webhttp"'
test_fuzz_replay_webhttp_LDADD = client/libctclient.a $(LDADD)

test_fuzz_fuzz_delta_SOURCES = test/fuzz/fuzz_delta.c test/fuzz/fuzz_delta.h $(CT_FUZZ_COMMON)
test_fuzz_fuzz_delta_LDFLAGS = $(CT_FUZZ_LDFLAGS)
test_fuzz_fuzz_safetensors_SOURCES = test/fuzz/fuzz_safetensors.c $(CT_FUZZ_COMMON)
test_fuzz_fuzz_safetensors_LDFLAGS = $(CT_FUZZ_LDFLAGS)
test_fuzz_fuzz_tokenizer_SOURCES = test/fuzz/fuzz_tokenizer.c $(CT_FUZZ_COMMON)
test_fuzz_fuzz_tokenizer_LDFLAGS = $(CT_FUZZ_LDFLAGS)
test_fuzz_fuzz_tokens_SOURCES = test/fuzz/fuzz_tokens.c $(CT_FUZZ_COMMON)
test_fuzz_fuzz_tokens_LDFLAGS = $(CT_FUZZ_LDFLAGS)
test_fuzz_fuzz_gpt2_SOURCES = test/fuzz/fuzz_gpt2.c $(CT_FUZZ_COMMON)
test_fuzz_fuzz_gpt2_LDFLAGS = $(CT_FUZZ_LDFLAGS)
test_fuzz_fuzz_hfconfig_SOURCES = test/fuzz/fuzz_hfconfig.c $(CT_FUZZ_COMMON)
test_fuzz_fuzz_hfconfig_LDFLAGS = $(CT_FUZZ_LDFLAGS)
test_fuzz_fuzz_jinja_SOURCES = test/fuzz/fuzz_jinja.c $(CT_FUZZ_COMMON)
test_fuzz_fuzz_jinja_LDFLAGS = $(CT_FUZZ_LDFLAGS)
test_fuzz_fuzz_chatline_SOURCES = test/fuzz/fuzz_chatline.c $(CT_FUZZ_COMMON)
test_fuzz_fuzz_chatline_LDFLAGS = $(CT_FUZZ_LDFLAGS)
test_fuzz_fuzz_webhttp_SOURCES = test/fuzz/fuzz_webhttp.c $(CT_FUZZ_COMMON)
test_fuzz_fuzz_webhttp_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/client
test_fuzz_fuzz_webhttp_LDFLAGS = $(CT_FUZZ_LDFLAGS)
test_fuzz_fuzz_webhttp_LDADD = client/libctclient.a $(LDADD)

# The seed maker (tools/fuzz --seeds): writes the seeds of every corpus.
EXTRA_PROGRAMS += test/fuzz/seeds
test_fuzz_seeds_SOURCES = test/fuzz/seeds.c test/fuzz/fuzz_delta.h
