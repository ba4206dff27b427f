#include <epochrt/actors/api/tls_options.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <epochrt/actors/api/actors_errc.hpp>

namespace epochrt {

namespace {

using ssl_ctx_ptr = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;
using bio_ptr = std::unique_ptr<BIO, decltype(&BIO_free)>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

// OpenSSL's reasons for the last failure, oldest first; clears its queue.
std::string openssl_reasons() {
  std::string result;
  while (auto code = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(code);
    if (!result.empty())
      result += "; ";
    result += reason != nullptr ? reason : "unknown OpenSSL error";
  }
  return result.empty() ? std::string{"unknown OpenSSL error"} : result;
}

caf::error bad_file(const char* what, const std::string& path,
                    const std::string& why) {
  return make_error(actors_errc::invalid_argument,
                    std::string{what} + " " + path + ": " + why);
}

// A regular file we can stat; with `private_only`, one only its owner may
// read or write.
caf::error check_file(const char* what, const std::string& path,
                      bool private_only) {
  if (path.empty())
    return make_error(actors_errc::invalid_argument,
                      std::string{what} + ": no file given");
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return bad_file(what, path, std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return bad_file(what, path, "not a regular file");
  if (private_only && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    return bad_file(what, path, "others may read or write it (chmod 600 it)");
  return {};
}

// Without it, OpenSSL would ask for the passphrase of an encrypted key on
// the terminal; CAF has no passphrase either, so we refuse such keys.
int refuse_passphrase(char*, int, int, void*) {
  return 0;
}

} // namespace

caf::error check_tls_options(const tls_options& options) {
  if (auto err = check_file("TLS certificate", options.certificate_file, false))
    return err;
  if (auto err = check_file("TLS key", options.key_file, true))
    return err;
  if (auto err = check_file("TLS CA file", options.ca_file, false))
    return err;
  ERR_clear_error();
  ssl_ctx_ptr ctx{SSL_CTX_new(TLS_method()), &SSL_CTX_free};
  if (!ctx)
    return make_error(actors_errc::invalid_argument,
                      "cannot create a TLS context: " + openssl_reasons());
  if (SSL_CTX_use_certificate_chain_file(ctx.get(),
                                         options.certificate_file.c_str())
      != 1)
    return bad_file("TLS certificate", options.certificate_file,
                    openssl_reasons());
  bio_ptr key_in{BIO_new_file(options.key_file.c_str(), "r"), &BIO_free};
  if (!key_in)
    return bad_file("TLS key", options.key_file, openssl_reasons());
  pkey_ptr key{
    PEM_read_bio_PrivateKey(key_in.get(), nullptr, refuse_passphrase, nullptr),
    &EVP_PKEY_free};
  if (!key)
    return bad_file("TLS key", options.key_file,
                    "not an unencrypted PEM private key (" + openssl_reasons()
                      + ")");
  if (SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1
      || SSL_CTX_check_private_key(ctx.get()) != 1)
    return bad_file("TLS key", options.key_file,
                    "not the key of the certificate in "
                      + options.certificate_file + " (" + openssl_reasons()
                      + ")");
  if (SSL_CTX_load_verify_locations(ctx.get(), options.ca_file.c_str(), nullptr)
      != 1)
    return bad_file("TLS CA file", options.ca_file, openssl_reasons());
  return {};
}

} // namespace epochrt
