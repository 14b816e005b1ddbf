// The endpoint's web configuration (--web.config.file, the exporter-toolkit format),
// rail::web::ParseWebConfig.
//
// ParseWebConfig documents std::runtime_error subclasses; anything else escaping is a crash. A
// raw yaml-cpp exception (also a std::runtime_error) is a crash too: its message names neither
// the file nor the key, which docs/hardening.md promises for a bad web config.
#include <yaml-cpp/exceptions.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include "fuzz_check.h"
#include "rail/web/web_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    // Relative cert_file/key_file paths resolve against the base directory; nothing is opened.
    (void)rail::web::ParseWebConfig(rail::fuzz::AsText(data, size), "web-fuzz.yml", "/etc/rail");
  } catch (const YAML::Exception& error) {
    std::fprintf(stderr, "raw yaml-cpp exception %s: %s\n", typeid(error).name(), error.what());
    FUZZ_CHECK(false, "yaml-cpp exceptions are turned into errors that name the key");
  } catch (const std::runtime_error&) {
    // Documented: a bad web configuration.
  }
  return 0;
}
