#pragma once

#include <memory>
#include <string>

namespace epochrt::test {

/// PEM files of one TLS identity: a certificate and its key (mode 0600).
struct tls_identity {
  std::string certificate_file;
  std::string key_file;
};

/// A throwaway certificate authority in a directory: `ca_file` holds its
/// certificate (P-256, SHA-256, valid for a day), and `issue` makes
/// identities it signs. Throws std::runtime_error when OpenSSL fails.
class test_ca {
public:
  /// Writes `<dir>/<name>-ca.pem` (and keeps the CA's key in memory only).
  test_ca(const std::string& dir, const std::string& name);
  ~test_ca();

  test_ca(const test_ca&) = delete;
  test_ca& operator=(const test_ca&) = delete;

  const std::string& ca_file() const noexcept {
    return ca_file_;
  }

  /// A fresh key and a certificate for `common_name` signed by this CA:
  /// `<dir>/<common_name>.pem` and `<dir>/<common_name>.key`.
  tls_identity issue(const std::string& common_name) const;

private:
  struct impl;

  std::string dir_;
  std::string ca_file_;
  std::unique_ptr<impl> impl_;
};

} // namespace epochrt::test
