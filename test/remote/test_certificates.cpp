#include "test/remote/test_certificates.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace epochrt::test {

namespace {

using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using cert_ptr = std::unique_ptr<X509, decltype(&X509_free)>;

[[noreturn]] void fail(const std::string& what) {
  char reason[256] = "unknown";
  if (auto code = ERR_get_error())
    ERR_error_string_n(code, reason, sizeof(reason));
  throw std::runtime_error("test certificates: " + what + ": " + reason);
}

key_ptr make_key() {
  key_ptr key{EVP_EC_gen("P-256"), &EVP_PKEY_free};
  if (!key)
    fail("cannot generate a P-256 key");
  return key;
}

cert_ptr make_certificate(const std::string& common_name, EVP_PKEY* key,
                          X509* issuer, EVP_PKEY* issuer_key, long serial) {
  cert_ptr cert{X509_new(), &X509_free};
  if (!cert)
    fail("X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  auto name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(
    name, "CN", MBSTRING_ASC,
    reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(
    cert.get(), issuer != nullptr ? X509_get_subject_name(issuer) : name);
  X509_set_pubkey(cert.get(), key);
  if (issuer == nullptr) {
    // A CA certificate: OpenSSL accepts it as a trust anchor only with
    // basicConstraints CA:TRUE.
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
    auto ext = X509V3_EXT_conf_nid(nullptr, &ctx, NID_basic_constraints,
                                   "critical,CA:TRUE");
    if (ext == nullptr || X509_add_ext(cert.get(), ext, -1) != 1)
      fail("cannot mark the CA certificate");
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0)
    fail("cannot sign the certificate of " + common_name);
  return cert;
}

void write_certificate(const std::string& path, X509* cert) {
  auto out = std::fopen(path.c_str(), "w");
  if (out == nullptr)
    throw std::runtime_error("test certificates: cannot write " + path);
  auto ok = PEM_write_X509(out, cert) == 1;
  std::fclose(out);
  if (!ok)
    fail("cannot write " + path);
}

void write_key(const std::string& path, EVP_PKEY* key) {
  auto out = std::fopen(path.c_str(), "w");
  if (out == nullptr)
    throw std::runtime_error("test certificates: cannot write " + path);
  ::chmod(path.c_str(), 0600);
  auto ok
    = PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr)
    == 1;
  std::fclose(out);
  if (!ok)
    fail("cannot write " + path);
}

} // namespace

struct test_ca::impl {
  key_ptr key{nullptr, &EVP_PKEY_free};
  cert_ptr cert{nullptr, &X509_free};
  mutable long next_serial = 2;
};

test_ca::test_ca(const std::string& dir, const std::string& name)
  : dir_(dir), ca_file_(dir + "/" + name + "-ca.pem"),
    impl_(std::make_unique<impl>()) {
  impl_->key = make_key();
  impl_->cert = make_certificate(name + " CA", impl_->key.get(), nullptr,
                                 impl_->key.get(), 1);
  write_certificate(ca_file_, impl_->cert.get());
}

test_ca::~test_ca() = default;

tls_identity test_ca::issue(const std::string& common_name) const {
  auto key = make_key();
  auto cert = make_certificate(common_name, key.get(), impl_->cert.get(),
                               impl_->key.get(), impl_->next_serial++);
  tls_identity result{dir_ + "/" + common_name + ".pem",
                      dir_ + "/" + common_name + ".key"};
  write_certificate(result.certificate_file, cert.get());
  write_key(result.key_file, key.get());
  return result;
}

} // namespace epochrt::test
