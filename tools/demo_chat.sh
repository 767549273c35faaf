# tools/demo_chat.sh - the data of DEMO_SIZE=chat, sourced by tools/demo.sh:
# a byte-level tokenizer with a chat template, and conversations taken from
# the question-and-answer fortunes Debian ships.

# chat_tokenizer DIR: write DIR/tokenizer.json, a Hugging Face byte-level
# BPE with no merges (one token per byte, ids 0-255 as the bytes; the byte
# alphabet of GPT-2's byte-level pre-tokeniser) and three special tokens:
# <|endoftext|> 256, <|im_start|> 257, <|im_end|> 258; and
# DIR/tokenizer_config.json with a ChatML template (each message between
# <|im_start|>ROLE and <|im_end|>; the generation prompt opens an assistant
# turn) and <|im_end|> as the end of turn.
chat_tokenizer() {
	mkdir -p "$1"
	awk 'function added(id, s) {
		return sprintf("  {\"id\": %d, \"content\": \"%s\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": true}", id, s)
	}
	BEGIN {
		n = 0
		for (b = 0; b < 256; b++) {
			if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)
				cp = b
			else
				cp = 256 + n++
			v = v sprintf("%s\"\\u%04x\": %d", b ? ", " : "", cp, b)
		}
		print "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null,"
		print " \"added_tokens\": ["
		print added(256, "<|endoftext|>") ","
		print added(257, "<|im_start|>") ","
		print added(258, "<|im_end|>") "],"
		print " \"normalizer\": null,"
		print " \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": true},"
		print " \"post_processor\": null,"
		print " \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true},"
		print " \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": null,"
		print "  \"end_of_word_suffix\": null, \"fuse_unk\": false, \"byte_fallback\": false, \"ignore_merges\": false,"
		print "  \"vocab\": {" v ", \"<|endoftext|>\": 256, \"<|im_start|>\": 257, \"<|im_end|>\": 258},"
		print "  \"merges\": []}}"
	}' >"$1/tokenizer.json"
	cat >"$1/tokenizer_config.json" <<'JSON'
{"bos_token": null, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
 "chat_template": "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"}
JSON
}

# fortune_chats FILE...: the fortunes of FILE... written as questions and
# answers ("Q:" and "A:" lines, continued on the lines after them) as one
# {"messages": [user, assistant, ...]} line each; a fortune with anything
# else in it is left out.
fortune_chats() {
	awk 'function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
	function msg() {
		if (role != "") {
			gsub(/[ \t]+/, " ", text); sub(/^ /, "", text); sub(/ $/, "", text)
			msgs = msgs (nm++ ? ", " : "") "{\"role\": \"" role "\", \"content\": \"" esc(text) "\"}"
			roles = roles substr(role, 1, 1)
		}
		role = ""; text = ""
	}
	function record() {
		msg()
		if (nm >= 2 && roles ~ /^(ua)+$/ && !bad)
			print "{\"messages\": [" msgs "]}"
		msgs = ""; roles = ""; nm = 0; bad = 0; seen = 0
	}
	/^%$/ { record(); next }
	/^Q:/ { msg(); role = "user"; text = substr($0, 3); seen = 1; next }
	/^A:/ { msg(); if (!seen) bad = 1; role = "assistant"; text = substr($0, 3); next }
	{ if (role != "") text = text " " $0; else if (seen) bad = 1 }
	END { record() }' "$@"
}
