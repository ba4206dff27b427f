#pragma once

#include <string>

#include <caf/error.hpp>

namespace epochrt {

/// The files of one side of a mutual-TLS connection between a master and a
/// node daemon. Each side presents its own certificate and accepts the
/// other's only when a CA in its `ca_file` signed it. Host names are not
/// checked: whoever holds a certificate of that CA is trusted, so use a CA
/// of your own for a job's processes, not a public one.
struct tls_options {
  /// This process's certificate (PEM; a chain, leaf first, may follow).
  std::string certificate_file;
  /// The certificate's private key (PEM, not encrypted). Only its owner
  /// may read it.
  std::string key_file;
  /// The CA certificates (PEM) a peer's certificate must chain to.
  std::string ca_file;
};

/// Loads the three files as a TLS connection would and checks that the key
/// belongs to the certificate. actors_errc::invalid_argument, naming the
/// file and OpenSSL's reason, when a file is missing, unreadable, not PEM,
/// an encrypted key, a key others may read, or a key of another
/// certificate. CAF loads these files only when a connection opens, and an
/// error there ends the process; check them before.
caf::error check_tls_options(const tls_options& options);

} // namespace epochrt
