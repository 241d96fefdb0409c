// Writes the seed corpora under fuzz/corpus/ with troupe's own writers
// (TFRecordWriter, encode_checkpoint, Topology::serialized, the payloads'
// encode, CAF's binary_serializer over the inspect overloads), so that every
// seed is an input the real code produces. Run from the build folder:
//   fuzz/make_seeds <source>/fuzz/corpus
// and commit what changed. Text formats (TF_CONFIG, host lists) and IDX
// (troupe only reads it) are written out literally.

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/binary_serializer.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/actors/ps/ps_settings_messages.hpp>
#include <troupe/collectives/wire_payloads.hpp>
#include <troupe/core/type_ids.hpp>
#include <troupe/datasets/tfrecord_writer.hpp>
#include <troupe/net/auth/cluster_auth.hpp>
#include <troupe/net/auth/connection_auth.hpp>
#include <troupe/net/bootstrap/cluster_types.hpp>
#include <troupe/net/link/frame_header.hpp>
#include <troupe/strategies/checkpoint_format.hpp>
#include <troupe/strategies/tpu_topology.hpp>

using namespace troupe;
using namespace troupe::internal;
namespace fs = std::filesystem;

namespace {

fs::path root;

void put(const std::string& target, const std::string& name, const std::string& bytes) {
  const fs::path dir = root / target;
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
std::string raw(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof value);
}

std::string read_fd(int fd) {
  std::string bytes(static_cast<std::size_t>(::lseek(fd, 0, SEEK_END)), '\0');
  if (::pread(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
    throw std::runtime_error("cannot read back a memfd");
  return bytes;
}

std::string gzip(const std::string& bytes) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY); // 31: a gzip header
  std::string out(deflateBound(&z, bytes.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// -- one corpus per target -------------------------------------------------------

void tfrecord() {
  const std::vector<std::vector<std::string>> files = {
    {}, {"a"}, {"hello", "", "tfrecord"}, {std::string(300, 'x'), "\x01\x02\x03"}};
  int n = 0;
  for (const auto& records : files) {
    const std::string path = (fs::temp_directory_path() / "troupe-seed.tfrecord").string();
    {
      TFRecordWriter writer(path);
      for (const auto& record : records)
        writer.write(record);
    }
    std::ifstream in(path, std::ios::binary);
    put("tfrecord", "records" + std::to_string(n++), std::string(std::istreambuf_iterator<char>(in), {}));
    fs::remove(path);
  }
}

void checkpoint() {
  const std::vector<std::vector<std::pair<std::string, Tensor>>> files = {
    {},
    {{"v", Tensor(1.5f)}},
    {{"dense/kernel", Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3})},
     {"dense/bias", Tensor::from_vector(std::vector<float>{0.5f, -0.5f, 0}, Shape{3})},
     {"step", Tensor(int64_t{42})}},
    {{"flags", Tensor::from_vector(std::vector<uint8_t>{1, 0, 1}, Shape{3})}, {"x", Tensor(3.25)}}};
  int n = 0;
  for (const auto& entries : files) {
    const int fd = memfd_create("troupe-seed", 0);
    encode_checkpoint(fd, "seed.ckpt", entries);
    put("checkpoint", "checkpoint" + std::to_string(n++), read_fd(fd));
    ::close(fd);
  }
}

void tpu_topology() {
  int n = 0;
  for (auto [cores, hosts] : {std::pair{1, 1}, {4, 1}, {8, 1}, {8, 2}, {16, 4}})
    put("tpu_topology", "topology" + std::to_string(n++), Topology::emulated_slice(cores, hosts).serialized());
  // A slice with a missing chip: the mesh is bigger than the devices in it.
  put("tpu_topology", "topology" + std::to_string(n++),
      Topology({2, 2, 1, 1}, {0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}, {1, 3, 4}).serialized());
}

std::string idx_file(uint8_t type, const std::vector<uint32_t>& dims, std::size_t element_bytes) {
  std::string bytes{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  std::size_t count = 1;
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes.push_back(static_cast<char>(d >> shift));
    count *= d;
  }
  for (std::size_t i = 0; i < count * element_bytes; ++i)
    bytes.push_back(static_cast<char>(i * 37 + 11));
  return bytes;
}

void idx() {
  put("idx", "labels-ubyte", idx_file(0x08, {10}, 1));
  put("idx", "images-ubyte", idx_file(0x08, {3, 4, 4}, 1));
  put("idx", "images-ubyte.gz", gzip(idx_file(0x08, {2, 5, 5}, 1)));
  put("idx", "int8", idx_file(0x09, {6}, 1));
  put("idx", "int16", idx_file(0x0B, {2, 3}, 2));
  put("idx", "int32", idx_file(0x0C, {4}, 4));
  put("idx", "float32", idx_file(0x0D, {2, 2}, 4));
  put("idx", "float64", idx_file(0x0E, {3}, 8));
  put("idx", "scalar", idx_file(0x08, {}, 1));
}

std::string frame(FrameType type, const FrameBytes& payload) {
  FrameHeader header;
  header.type = type;
  header.group = 1;
  header.run = 2;
  header.seq = 3;
  header.size = static_cast<uint32_t>(payload.size);
  return raw(header) + std::string(reinterpret_cast<const char*>(payload.data), payload.size);
}

void frames() {
  const std::vector<Tensor> tensors = {Tensor::from_vector(std::vector<float>{1, 2, 3}, Shape{3}),
                                       Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4}, Shape{2, 2})};
  AnnouncePayload announce{CollectiveFingerprint::of(CollectiveKind::all_reduce, ReduceOp::SUM, 0, tensors), 2, ""};
  put("frame", "announce", frame(FrameType::announce, announce.encode()));
  AnnouncePayload gather{CollectiveFingerprint::of(CollectiveKind::all_gather, ReduceOp::SUM, 1, tensors), 1,
                         "nccl-communicator"};
  put("frame", "announce-gather", frame(FrameType::announce, gather.encode()));
  put("frame", "abort", frame(FrameType::abort, AbortPayload{Errc::timeout, "rank 1 timed out"}.encode()));
  put("frame", "run_done", frame(FrameType::run_done, RunDonePayload{7, ""}.encode()));
  put("frame", "run_done-failed", frame(FrameType::run_done, RunDonePayload{3, "a replica failed"}.encode()));
  put("frame", "bye", frame(FrameType::bye, FrameBytes{}));
  const std::string data(16, '\x2a');
  put("frame", "data", frame(FrameType::data, FrameBytes{nullptr, reinterpret_cast<const std::byte*>(data.data()),
                                                         data.size()}));
}

void handshake() {
  // Even first byte: what a dialer sends the acceptor of rank 0 (the
  // target's spec fingerprint and ranks).
  auth::DialerHello hello;
  hello.purpose = static_cast<uint8_t>(auth::Purpose::data_plane);
  hello.dialer_rank = 1;
  hello.acceptor_rank = 0;
  hello.dialer_pid = 4242;
  hello.spec_fingerprint = 0x5452505346555a5aULL;
  hello.nonce.fill(7);
  put("handshake", "hello", std::string(1, '\0') + raw(hello) + std::string(auth::mac_bytes, '\x11'));
  auto other_rank = hello;
  other_rank.acceptor_rank = 3;
  put("handshake", "hello-other-rank", std::string(1, '\0') + raw(other_rank));
  auto tls = hello;
  tls.flags = auth::hello_flag_tls;
  put("handshake", "hello-tls", std::string(1, '\0') + raw(tls));
  // Odd first byte: what an acceptor answers the dialer of rank 1.
  auth::AcceptorChallenge challenge;
  challenge.acceptor_rank = 0;
  challenge.nonce.fill(9);
  auth::AcceptorVerdict verdict;
  verdict.proof.fill(5);
  put("handshake", "challenge", std::string(1, '\1') + raw(challenge) + raw(verdict));
  auto refused = challenge;
  refused.refusal = static_cast<uint32_t>(auth::HelloRefusal::spec);
  refused.nonce.fill(0);
  put("handshake", "challenge-refused", std::string(1, '\1') + raw(refused));
  verdict.verdict = static_cast<uint32_t>(auth::Verdict::wrong_key);
  verdict.proof.fill(0);
  put("handshake", "challenge-wrong-key", std::string(1, '\1') + raw(challenge) + raw(verdict));
}

// The order of messages_fuzz.cpp's WireTypes: the seed's first byte.
template <class T>
void message(caf::actor_system& sys, uint8_t index, const std::string& name, T value) {
  std::vector<char> bytes;
  caf::binary_serializer sink(sys, bytes);
  if (sink(value))
    throw std::runtime_error("cannot serialize the seed " + name);
  put("messages", name, std::string(1, static_cast<char>(index)) + std::string(bytes.begin(), bytes.end()));
}

void messages() {
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("testing"));
  caf::actor_system sys(cfg);
  const Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  uint8_t i = 0;
  message(sys, i++, "tensor", t);
  message(sys, i++, "shape", Shape{2, 3});
  message(sys, i++, "device_spec", DeviceSpec::from_string("/job:worker/replica:0/task:1/device:CPU:0"));
  message(sys, i++, "hello", HelloMsg{});
  message(sys, i++, "node_lookup", NodeLookupMsg{});
  message(sys, i++, "node_farewell", NodeFarewellMsg{});
  message(sys, i++, "shard_key", ShardKey{});
  message(sys, i++, "attempt_id", AttemptId{});
  message(sys, i++, "shard_update", ShardUpdate{});
  PsCreateMsg create{};
  create.name = "dense/kernel";
  create.initial = t;
  message(sys, i++, "ps_create", create);
  message(sys, i++, "ps_read", PsReadMsg{});
  message(sys, i++, "ps_apply", PsApplyMsg{});
  message(sys, i++, "ps_stage", PsStageMsg{});
  message(sys, i++, "ps_commit", PsCommitMsg{});
  message(sys, i++, "ps_commit_reply", PsCommitReply{});
  message(sys, i++, "ps_abort", PsAbortMsg{});
  message(sys, i++, "ps_stats", PsStatsMsg{});
  message(sys, i++, "ps_stats_reply", PsStats{});
  message(sys, i++, "ps_gather", PsGatherMsg{});
  CrossMemoryTensor remote{};
  remote.bytes = 64 << 10;
  remote.dtype = static_cast<uint8_t>(DType::float32);
  remote.dims = {128, 128};
  message(sys, i++, "cross_memory_tensor", remote);
  message(sys, i++, "ps_read_reply", PsReadReply{t, {}});
  message(sys, i++, "ps_release", PsReleaseMsg{7});
  message(sys, i++, "closure_spec", ClosureSpec{});
  message(sys, i++, "run_closure", RunClosureMsg{});
  message(sys, i++, "closure_finished", ClosureFinishedMsg{});
  message(sys, i++, "closure_attempt_ended", ClosureAttemptEndedMsg{});
  message(sys, i++, "ps_settings", PsSettingsMsg{});
  message(sys, i++, "ps_settings_verdict", PsSettingsVerdictMsg{});
}

void text(const std::string& target, const std::string& name, const std::string& bytes) { put(target, name, bytes); }

void tf_config() {
  text("tf_config", "workers",
       R"({"cluster": {"worker": ["localhost:12345", "localhost:23456"], "ps": ["localhost:34567"]}, )"
       R"("task": {"type": "worker", "index": 0}})");
  text("tf_config", "chief",
       R"({"cluster": {"chief": ["c:1"], "worker": ["w:1", "w:2"]}, "task": {"type": "chief", "index": 0},)"
       R"( "rpc_layer": "grpc", "environment": "cloud"})");
  text("tf_config", "evaluator",
       R"({"cluster": {"chief": ["[::1]:2222"], "worker": ["10.0.0.2:2222"]}, "task": {"type": "evaluator", "index": 0}})");
  text("tf_config", "no_cluster", R"({"task": {"type": "worker", "index": 0}})");
  text("tf_config", "empty", "{}");
}

void hostlist() {
  text("hostlist", "single", "node1");
  text("hostlist", "range", "node[1-4]");
  text("hostlist", "mixed", "gpu[01-03,7],cpu-a[5-6]x,login");
  text("hostlist", "nested", "rack[1-2]-node[001-003]");
  text("hostlist", "tasks_per_node", "2(x3),1");
  text("hostlist", "tasks_per_node_simple", "4,4,2");
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seeds <source>/fuzz/corpus\n";
    return 2;
  }
  root = argv[1];
  tfrecord();
  checkpoint();
  tpu_topology();
  idx();
  frames();
  handshake();
  messages();
  tf_config();
  hostlist();
  return 0;
}
