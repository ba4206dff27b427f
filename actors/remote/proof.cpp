#include <epochrt/actors/remote/proof.hpp>

#include <cstdint>
#include <cstdlib>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace epochrt::detail {

namespace {

void append_field(std::string& out, const char* data, size_t size) {
  auto len = static_cast<uint64_t>(size);
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  out.append(data, size);
}

const char* domain_of(prover who) {
  switch (who) {
    case prover::daemon:
      return "epochrt daemon proof v1";
    case prover::master:
      return "epochrt master proof v1";
    case prover::admitting_daemon:
      return "epochrt admission daemon proof v1";
    case prover::admitted_master:
      return "epochrt admission master proof v1";
  }
  std::abort();
}

} // namespace

std::vector<char> make_nonce() {
  std::vector<char> nonce(nonce_size);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()),
                 static_cast<int>(nonce.size()))
      != 1)
    std::abort();
  return nonce;
}

std::vector<char> make_proof(const std::string& secret, prover who,
                             const std::vector<char>& nonce,
                             std::string_view node) {
  std::string input;
  const char* domain = domain_of(who);
  append_field(input, domain, std::char_traits<char>::length(domain));
  append_field(input, nonce.data(), nonce.size());
  append_field(input, node.data(), node.size());
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  auto* ok = HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                  reinterpret_cast<const unsigned char*>(input.data()),
                  input.size(), mac, &mac_len);
  if (ok == nullptr)
    std::abort();
  return std::vector<char>(reinterpret_cast<char*>(mac),
                           reinterpret_cast<char*>(mac) + mac_len);
}

bool same_proof(const std::vector<char>& expected,
                const std::vector<char>& got) noexcept {
  return expected.size() == got.size() && !expected.empty()
    && CRYPTO_memcmp(expected.data(), got.data(), got.size()) == 0;
}

} // namespace epochrt::detail
