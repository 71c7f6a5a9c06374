// Tokenizer references straight from llama.cpp's C API, for vocabularies that
// llama-cpp-python is not at hand for (used by gen_tokenizer_refs.py for the nomic-bert
// WordPiece vocabulary). Loads MODEL vocab-only and prints one JSON object:
//
//   n_tokens, bos, eos, eot, sep, add_bos, eog: as llama_vocab_* report them;
//   pieces_fnv1a: FNV-1a-64 over every llama_token_to_piece (special false, then true),
//                 each piece preceded by its length as 4 little-endian bytes;
//   ids / ids_special: llama_tokenize(text, add_special = true, parse_special = false / true)
//                 per string of CORPUS_JSON's "strings";
//   decoded / decoded_special: llama_detokenize(ids, remove_special = false,
//                 unparse_special = false / true) (of ids / ids_special).
//
// Build against the llama.cpp tree and its CMake build (see gen_tokenizer_refs.py):
//   g++ -std=c++17 -O1 -I LLAMA/include -I LLAMA/ggml/include -I LLAMA/vendor \
//       tests/scripts/llama_vocab_ref.cpp -L BUILD/bin -lllama -Wl,-rpath,BUILD/bin -o llama_vocab_ref
//   llama_vocab_ref MODEL CORPUS_JSON > out.json

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "llama.h"
#include "nlohmann/json.hpp"

using json = nlohmann::ordered_json;

static std::vector<llama_token> tokenize(const llama_vocab * vocab, const std::string & text, bool parse_special) {
    std::vector<llama_token> ids(text.size() + 8);
    int32_t n = llama_tokenize(vocab, text.data(), (int32_t) text.size(), ids.data(), (int32_t) ids.size(), true,
                               parse_special);
    if (n < 0) {
        ids.resize(-n);
        n = llama_tokenize(vocab, text.data(), (int32_t) text.size(), ids.data(), (int32_t) ids.size(), true,
                           parse_special);
    }
    ids.resize(n < 0 ? 0 : n);
    return ids;
}

static std::string detokenize(const llama_vocab * vocab, const std::vector<llama_token> & ids, bool special) {
    std::string out(ids.size() * 32 + 64, '\0');
    int32_t n = llama_detokenize(vocab, ids.data(), (int32_t) ids.size(), out.data(), (int32_t) out.size(), false,
                                 special);
    if (n < 0) {
        out.resize(-n);
        n = llama_detokenize(vocab, ids.data(), (int32_t) ids.size(), out.data(), (int32_t) out.size(), false,
                             special);
    }
    out.resize(n < 0 ? 0 : n);
    return out;
}

static uint64_t fnv1a(uint64_t h, const void * data, size_t n) {
    const auto * p = (const unsigned char *) data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001B3ULL;
    }
    return h;
}

int main(int argc, char ** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODEL CORPUS_JSON\n", argv[0]);
        return 2;
    }
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model * model = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        fprintf(stderr, "cannot load %s\n", argv[1]);
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    std::ifstream f(argv[2]);
    json corpus = json::parse(f);

    json out;
    const int32_t n = llama_vocab_n_tokens(vocab);
    out["n_tokens"] = n;
    out["bos"] = llama_vocab_bos(vocab);
    out["eos"] = llama_vocab_eos(vocab);
    out["eot"] = llama_vocab_eot(vocab);
    out["sep"] = llama_vocab_sep(vocab);
    out["add_bos"] = llama_vocab_get_add_bos(vocab);
    json eog = json::array();
    for (int32_t t = 0; t < n; t++) {
        if (llama_vocab_is_eog(vocab, t)) {
            eog.push_back(t);
        }
    }
    out["eog"] = eog;
    char buf[4096];
    json digests;
    for (bool special : { false, true }) {
        uint64_t h = 0xCBF29CE484222325ULL;
        for (int32_t t = 0; t < n; t++) {
            int32_t len = llama_token_to_piece(vocab, t, buf, sizeof(buf), 0, special);
            uint32_t ulen = len < 0 ? 0 : (uint32_t) len;
            unsigned char le[4] = { (unsigned char) ulen, (unsigned char) (ulen >> 8), (unsigned char) (ulen >> 16),
                                    (unsigned char) (ulen >> 24) };
            h = fnv1a(h, le, 4);
            h = fnv1a(h, buf, ulen);
        }
        char hex[17];
        snprintf(hex, sizeof(hex), "%016llx", (unsigned long long) h);
        digests[special ? "special_true" : "special_false"] = hex;
    }
    out["pieces_fnv1a"] = digests;
    json ids = json::array(), ids_sp = json::array(), dec = json::array(), dec_sp = json::array();
    for (const auto & s : corpus["strings"]) {
        const std::string text = s.get<std::string>();
        auto a = tokenize(vocab, text, false);
        auto b = tokenize(vocab, text, true);
        ids.push_back(a);
        ids_sp.push_back(b);
        // Invalid UTF-8 would not survive JSON; the Python side decodes with replacement.
        auto c = detokenize(vocab, a, false);
        dec.push_back(json::binary(std::vector<uint8_t>(c.begin(), c.end())));
        auto d = detokenize(vocab, b, true);
        dec_sp.push_back(json::binary(std::vector<uint8_t>(d.begin(), d.end())));
    }
    out["ids"] = ids;
    out["ids_special"] = ids_sp;
    out["decoded"] = dec;
    out["decoded_special"] = dec_sp;
    printf("%s\n", out.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
