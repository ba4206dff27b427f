#include "bench/gloo_allreduce.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>

#ifdef EPOCHRT_BENCH_GLOO
#  include <gloo/allreduce.h>
#  include <gloo/barrier.h>
#  include <gloo/math.h>
#  include <gloo/rendezvous/context.h>
#  include <gloo/rendezvous/file_store.h>
#  include <gloo/transport/tcp/device.h>
#endif

namespace epochrt::bench {

#ifdef EPOCHRT_BENCH_GLOO

bool gloo_available() noexcept {
  return true;
}

int run_gloo_worker(int rank, int size, const std::string& store_dir,
                    const allreduce_plan& plan) {
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store{store_dir};
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(std::chrono::seconds(60));
    context->connectFullMesh(store, device);
    for (size_t s = 0; s < plan.sizes_kib.size(); ++s) {
      auto count = static_cast<size_t>(plan.sizes_kib[s]) << 8; // f32s
      // Separate input and output, as epochrt's Allreduce writes another
      // blob: the result then stays the same from call to call.
      std::vector<float> in(count, static_cast<float>(rank + 1));
      std::vector<float> out(count, 0.0f);
      gloo::AllreduceOptions opts{context};
      opts.setInput(in.data(), count);
      opts.setOutput(out.data(), count);
      opts.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(
          &gloo::sum<float>));
      opts.setTimeout(std::chrono::seconds(60));
      gloo::allreduce(opts); // untimed: connections and pages warm
      if (rank == 0)
        std::printf("check %d %g\n", plan.sizes_kib[s],
                    static_cast<double>(out[0]));
      for (int r = 0; r < plan.reps; ++r) {
        gloo::BarrierOptions barrier{context};
        gloo::barrier(barrier);
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < plan.iters[s]; ++i)
          gloo::allreduce(opts);
        std::chrono::duration<double> elapsed
          = std::chrono::steady_clock::now() - start;
        if (rank == 0)
          std::printf("%d %.9f\n", plan.sizes_kib[s],
                      elapsed.count() / plan.iters[s]);
      }
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo worker %d: %s\n", rank, e.what());
    return 1;
  }
}

#else

bool gloo_available() noexcept {
  return false;
}

int run_gloo_worker(int, int, const std::string&, const allreduce_plan&) {
  std::fprintf(stderr, "collectives_bench was built without Gloo\n");
  return 1;
}

#endif

} // namespace epochrt::bench
