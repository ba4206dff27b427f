# Thin wrapper over CMake. `make demo` and `make test` each do the whole
# set-up on a fresh Debian 12 machine: install what is missing, configure,
# build, then run.

BUILD ?= build
JOBS ?= $(shell nproc)
MIB ?= 512
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps configure build test demo distributed-demo bench bench-epoch \
        bench-faults bench-collectives bench-python bench-torch bench-scale asan tsan \
        thread-safety \
        format clean

all: build

deps:
	@bash tools/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 600

demo: build
	bash examples/demo.sh $(BUILD)/bin/epochrt

# Three node daemons on this machine; one is killed mid-job, the job resumes.
distributed-demo: build
	bash examples/distributed/run.sh $(BUILD)/bin/epochrt

bench: build
	$(BUILD)/bin/checkpoint_bench --mib $(MIB)
	$(BUILD)/bin/replica_bench

# What an empty epoch costs, in-process and over node daemons, against a bare
# CAF request fan-out.
bench-epoch: build
	$(BUILD)/bin/epoch_bench

# All-reduce in-process and over node daemons, a channel between daemons and
# an epoch of examples/jobs/data_parallel.json, against memcpy, Gloo, Open
# MPI and bare CAF request/response.
bench-collectives: build
	$(BUILD)/bin/collectives_bench

# A Python op's per-call cost beside the same op in C++, and a 256 MiB
# fetch into NumPy beside a memcpy (bench/python_bench.py), at the lowest
# priority: on a busy machine the figures are indicative only.
bench-python: build
	PYTHONPATH=$(BUILD)/python nice -n 19 /usr/bin/python3 bench/python_bench.py

# examples/python/torch_digits.py's model trained by epochrt (in one process
# and on three daemons, checkpoints on) beside torch DDP over gloo with a
# torch.save per epoch: epoch_vs_ddp and checkpoint_ms (bench/torch_ddp_bench.py).
bench-torch: build
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/torch_ddp_bench.py

# A data-parallel job over 4, 16, 64 and 128 node daemons, without and with
# --replicas 1, against the same nodes in one process: per-epoch and commit
# time, the master's CPU and sends per epoch, daemon memory, and how each
# grows with the count (bench/scale_bench.py). Takes some 15 minutes.
bench-scale: build
	/usr/bin/python3 bench/scale_bench.py --epochrt $(BUILD)/bin/epochrt

# What a fault injection point costs with no plan active, against the same
# loop without it, and per epoch.
bench-faults: build
	$(BUILD)/bin/fault_point_bench

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
asan:
	$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Debug -DEPOCHRT_SANITIZE=ON -DEPOCHRT_BUILD_BENCH=OFF"

# The suites whose threads share memory directly, under ThreadSanitizer
# (Debian's CAF is not instrumented: see docs/design.md, Sanitizers).
tsan:
	$(MAKE) build BUILD=build-tsan CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Debug -DEPOCHRT_TSAN=ON -DEPOCHRT_BUILD_BENCH=OFF"
	cd build-tsan && ctest --output-on-failure -R 'runtime_test|persistence_test'

# Clang's thread-safety analysis over the files whose mutexes are annotated
# (also the CTest thread_safety).
thread-safety: configure
	bash tools/check-thread-safety.sh $(BUILD)

format:
	find messages runtime persistence actors tools examples test bench \
	  -name '*.hpp' -o -name '*.cpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
