#include "rail/fleet/file_sd.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <set>

#include "rail/peer/connection.h"

namespace rail::fleet {
namespace {

[[noreturn]] void Refuse(const std::string& source, const std::string& where,
                         const std::string& why) {
  throw FileSdError(source + ": " + where + (where.empty() ? "" : ": ") + why);
}

bool IsLabelName(const std::string& name) {
  if (name.empty()) return false;
  const auto is_start = [](unsigned char c) { return std::isalpha(c) || c == '_'; };
  if (!is_start(static_cast<unsigned char>(name.front()))) return false;
  for (const unsigned char c : name) {
    if (!is_start(c) && !std::isdigit(c)) return false;
  }
  return true;
}

// The target's identity in canonical form ("[v6]:port"), so that two files spelling one peer the
// same way give every agent the same string to plan with. A port is required: discovery data
// names responders, and a responder has no port that goes without saying.
std::string ParseAddress(const YAML::Node& node, const std::string& source,
                         const std::string& where) {
  if (!node.IsScalar()) Refuse(source, where, "a target must be a \"host:port\" string");
  const std::string text = node.Scalar();
  for (const unsigned char c : text) {
    if (std::isspace(c) || c == '/') {
      Refuse(source, where, "\"" + text + "\" is not host:port (whitespace or '/')");
    }
  }
  std::string error;
  const auto parsed = peer::ParseHostPort(text, 0, &error);
  if (!parsed) Refuse(source, where, error);
  if (parsed->port == 0) Refuse(source, where, "\"" + text + "\" has no port");
  return peer::FormatHostPort(parsed->host, parsed->port);
}

std::map<std::string, std::string> ParseLabels(const YAML::Node& node, const std::string& source,
                                               const std::string& where) {
  std::map<std::string, std::string> labels;
  if (!node || node.IsNull()) return labels;  // a group without labels
  if (!node.IsMap()) Refuse(source, where, "labels must be a map of names to strings");
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    if (!IsLabelName(name)) {
      Refuse(source, where, "\"" + name + "\" is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)");
    }
    if (!entry.second.IsScalar()) {
      Refuse(source, where + "." + name, "a label value must be a string");
    }
    labels[name] = entry.second.Scalar();
  }
  return labels;
}

void ParseGroup(const YAML::Node& group, const std::string& source, const std::string& where,
                std::vector<Target>* targets) {
  if (!group.IsMap()) Refuse(source, where, "a group must be a map with \"targets\"");
  // Unknown keys are refused rather than skipped: "label:" for "labels:" would otherwise drop
  // a peer's rails without a word.
  for (const auto& entry : group) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    if (key != "targets" && key != "labels") {
      Refuse(source, where, "unknown key \"" + key + "\" (a group has targets and labels)");
    }
  }
  const YAML::Node list = group["targets"];
  if (!list || !list.IsSequence()) {
    Refuse(source, where + ".targets", "missing, or not a list of \"host:port\"");
  }
  const auto labels = ParseLabels(group["labels"], source, where + ".labels");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string entry_where = where + ".targets[" + std::to_string(i) + "]";
    targets->push_back(Target{ParseAddress(list[i], source, entry_where), labels});
  }
}

}  // namespace

std::vector<Target> ParseFileSd(std::string_view text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& error) {
    Refuse(source, "line " + std::to_string(error.mark.line + 1), error.msg);
  }
  std::vector<Target> targets;
  // An empty file lists no peers yet: a file a deployment fills in later.
  if (!root || root.IsNull()) return targets;
  if (!root.IsSequence()) Refuse(source, "", "not a list of target groups");
  for (std::size_t i = 0; i < root.size(); ++i) {
    ParseGroup(root[i], source, "[" + std::to_string(i) + "]", &targets);
  }
  return targets;
}

}  // namespace rail::fleet
