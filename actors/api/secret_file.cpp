#include <epochrt/actors/api/secret_file.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <epochrt/actors/api/actors_errc.hpp>

namespace epochrt {

caf::expected<std::string> read_secret_file(const std::string& path) {
  auto bad = [&](const std::string& why) {
    return make_error(actors_errc::invalid_argument,
                      "secret file " + path + ": " + why);
  };
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return bad(std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return bad("not a regular file");
  // Like ssh with its keys: a secret others can read is no secret.
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    return bad("others may read or write it (chmod 600 it)");
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return bad("cannot be opened");
  std::string secret{std::istreambuf_iterator<char>{in},
                     std::istreambuf_iterator<char>{}};
  if (in.bad())
    return bad("cannot be read");
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r'))
    secret.pop_back();
  if (secret.size() < min_secret_size)
    return bad("the secret has " + std::to_string(secret.size())
               + " bytes; at least " + std::to_string(min_secret_size)
               + " are needed");
  return secret;
}

} // namespace epochrt
