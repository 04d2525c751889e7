#include "gat/names.hpp"

#include <cstdio>

namespace apshim::gat {

std::size_t utf8_length(const std::string& s, std::size_t i) {
    auto at = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
    auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return at(k) >= lo && at(k) <= hi; };
    unsigned c = at(i);
    if (c >= 0xc2 && c <= 0xdf) return cont(i + 1) ? 2 : 0;
    if (c == 0xe0) return cont(i + 1, 0xa0) && cont(i + 2) ? 3 : 0;
    if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) return cont(i + 1) && cont(i + 2) ? 3 : 0;
    if (c == 0xed) return cont(i + 1, 0x80, 0x9f) && cont(i + 2) ? 3 : 0;
    if (c == 0xf0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (c >= 0xf1 && c <= 0xf3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (c == 0xf4) return cont(i + 1, 0x80, 0x8f) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    return 0;
}

// Well-formed UTF-8 and printable ASCII as they are; any other byte as \xNN, or in JSON as \u00NN
// (the code point of that byte read as Latin-1), where quotes and backslashes are escaped too.
static std::string escaped(const std::string& s, bool json) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (json && (c == '"' || c == '\\')) {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
        } else if (std::size_t n = c >= 0x80 ? utf8_length(s, i) : (c >= 0x20 && c < 0x7f ? 1 : 0)) {
            out.append(s, i, n);
            i += n;
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, json ? "\\u%04x" : "\\x%02x", c);
            out += buf;
            ++i;
        }
    }
    return out;
}

std::string printable(const std::string& s) { return escaped(s, false); }

std::string json_string(const std::string& s) {
    std::string out(1, '"');  // appended to, not "\"" + ...: GCC 12 at -O3 warns of a restrict overlap there
    out += escaped(s, true);
    out += '"';
    return out;
}

}  // namespace apshim::gat
