#include "ErrorReport.hpp"

#include <cstdio>

namespace shardops {
namespace app {

void InputList::describe(const std::string& subject, const std::string& text) {
  for (Entry& e : entries) {
    if (e.subject == subject) e.described = text;
  }
}

std::string format_error(const std::string& command, const Error& e, const InputList& inputs) {
  std::string out = (command.empty() ? std::string() : command + ": ") + e.what();
  auto describe = [](const InputList::Entry& x) {
    return x.option + " " + x.dataset + (x.described.empty() ? "" : " " + x.described);
  };
  for (const InputList::Entry& x : inputs.entries) {
    if (!e.subject().empty() && x.subject == e.subject()) return out + " (in " + describe(x) + ")";
  }
  // A message about shapes involves several inputs: list all that were read (unless
  // the message already names the dataset it is about, as I/O errors do).
  const std::string text = e.what();
  for (const InputList::Entry& x : inputs.entries) {
    if (text.find(x.dataset) != std::string::npos) return out;
  }
  if (text.find(":/") != std::string::npos) return out;
  if (e.kind() == ErrorKind::InvalidArgument && e.subject().empty()) {
    std::string list;
    for (const InputList::Entry& x : inputs.entries) {
      if (x.described.empty()) continue;
      list += (list.empty() ? "" : ", ") + describe(x);
    }
    if (!list.empty()) out += " (inputs: " + list + ")";
  }
  return out;
}

std::string one_line(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned>(byte));
      out += escaped;
    }
  }
  return out;
}

}  // namespace app
}  // namespace shardops
