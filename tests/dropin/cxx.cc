// A C++ drop-in harness: the planted bug (an exception nobody catches,
// so std::terminate aborts) is behind a std::string comparison and a
// std::map lookup, so it takes libstdc++ and C++ linking to get there.
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

static const std::map<std::string, int> kinds = {{"alpha", 1}, {"beta", 2}};

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        std::string s(reinterpret_cast<const char *>(data), size);
        if (s.size() >= 8 && s.compare(0, 8, "SNAPDROP") == 0)
                throw std::runtime_error("planted");
        auto it = kinds.find(s);
        return it == kinds.end() ? 0 : it->second - 1;
}
