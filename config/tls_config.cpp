#include "config/tls_config.hpp"

#include <unistd.h>

#include "config/error.hpp"

namespace gleam::config {

namespace {

caf::error check_file(const std::string& path, const std::string& where_enabled,
                      const std::string& where, const char* what) {
  if (path.empty())
    return make_error(error_code::missing_key,
                      where_enabled + ": TLS is enabled but " + where + " is not set: name the "
                        + what + " (PEM), or set enabled = false; without it CAF would run "
                                 "anonymous, unauthenticated TLS");
  if (::access(path.c_str(), R_OK) != 0)
    return make_error(error_code::file_unreadable,
                      where + ": cannot read '" + path + "': check that the " + what
                        + " exists and this user may read it");
  return {};
}

} // namespace

caf::error validate_tls(const tls_config& tls, const std::string& where_enabled,
                        const std::string& where_certificate, const std::string& where_key,
                        const std::string& where_ca_file) {
  if (!tls.enabled)
    return {};
  if (auto err = check_file(tls.certificate, where_enabled, where_certificate, "certificate file"))
    return err;
  if (auto err = check_file(tls.key, where_enabled, where_key, "private key file"))
    return err;
  return check_file(tls.ca_file, where_enabled, where_ca_file, "CA file");
}

} // namespace gleam::config
