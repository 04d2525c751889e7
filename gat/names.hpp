// A job's name is chosen by its process (comm, or APSHIM_NAME): any bytes. These are the ways it
// is shown, so that no escape sequence reaches a terminal or a log.
#pragma once

#include <cstddef>
#include <string>

namespace apshim::gat {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
// at most U+10FFFF; 2-4 bytes), or 0 when the byte there does not start one (ASCII included).
std::size_t utf8_length(const std::string& s, std::size_t i);

// The name as it may appear on a terminal or in a log line: well-formed UTF-8 kept, control
// bytes and stray bytes as \xNN.
std::string printable(const std::string& s);

// The name as a JSON string, quotes included, valid whatever the bytes: well-formed UTF-8 kept,
// control bytes and bytes that are not part of well-formed UTF-8 (a name cut mid-character,
// Latin-1) as \u00XX.
std::string json_string(const std::string& s);

}  // namespace apshim::gat
