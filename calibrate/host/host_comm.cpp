#include "host_comm.hpp"

#include <algorithm>
#include <cstring>
#include <span>

#include "../error.hpp"

namespace dtperf::calibrate {

HostComm::HostComm(TcpMesh& mesh, std::vector<int> members) : mesh_(mesh), members_(std::move(members)) {
  const auto found = std::find(members_.begin(), members_.end(), mesh.rank());
  if (found == members_.end()) {
    throw CalibrationError("internal: rank " + std::to_string(mesh.rank()) + " is not in this communicator");
  }
  index_ = static_cast<int>(found - members_.begin());
}

std::size_t HostComm::segment_begin(std::size_t count, int segment) const {
  const int n = size();
  const int wrapped = ((segment % n) + n) % n;
  return count * static_cast<std::size_t>(wrapped) / static_cast<std::size_t>(n);
}

void HostComm::ring_step(const float* send_from, float* recv_into, std::size_t send_elements,
                         std::size_t recv_elements, const float* reduce_with) {
  const int n = size();
  const int right = members_[static_cast<std::size_t>((index_ + 1) % n)];
  const int left = members_[static_cast<std::size_t>((index_ + n - 1) % n)];
  // An empty segment still costs one message: one placeholder byte.
  char placeholder_out = 0;
  char placeholder_in = 0;
  TcpMesh::Send send{right, send_from, send_elements * sizeof(float)};
  if (send_elements == 0) send = {right, &placeholder_out, 1};
  TcpMesh::Recv recv{left, recv_into, recv_elements * sizeof(float), {}};
  if (recv_elements == 0) {
    recv = {left, &placeholder_in, 1, {}};
  } else if (reduce_with != nullptr) {
    // Receive into scratch and add each whole element as soon as it has arrived.
    incoming_.resize(std::max(incoming_.size(), recv_elements));
    recv.data = incoming_.data();
    recv.on_data = [&, reduced = std::size_t{0}](std::size_t, std::size_t to) mutable {
      const std::size_t complete = to / sizeof(float);
      for (std::size_t i = reduced; i < complete; ++i) recv_into[i] = reduce_with[i] + incoming_[i];
      reduced = complete;
    };
  }
  mesh_.transfer(std::span<const TcpMesh::Send>(&send, 1), std::span<const TcpMesh::Recv>(&recv, 1));
}

void HostComm::all_reduce_sum(const float* send, float* recv, std::size_t count) {
  const int n = size();
  if (n == 1) {
    std::memcpy(recv, send, count * sizeof(float));
    return;
  }
  const auto length = [&](int segment) {
    const int wrapped = ((segment % n) + n) % n;
    return count * static_cast<std::size_t>(wrapped + 1) / static_cast<std::size_t>(n) - segment_begin(count, segment);
  };
  const int r = index_;
  // Reduce-scatter: step s sends segment r-s, receives segment r-s-1 and adds its own part.
  for (int s = 0; s < n - 1; ++s) {
    const int out = r - s;
    const int in = r - s - 1;
    const float* source = s == 0 ? send : recv;
    ring_step(source + segment_begin(count, out), recv + segment_begin(count, in), length(out), length(in),
              send + segment_begin(count, in));
  }
  // All-gather: step s sends the finished segment r+1-s and receives segment r-s.
  for (int s = 0; s < n - 1; ++s) {
    const int out = r + 1 - s;
    const int in = r - s;
    ring_step(recv + segment_begin(count, out), recv + segment_begin(count, in), length(out), length(in), nullptr);
  }
}

void HostComm::max_all(std::vector<double>& values) {
  const std::size_t bytes = values.size() * sizeof(double);
  if (size() == 1 || bytes == 0) return;
  const int root = members_.front();
  if (index_ != 0) {
    mesh_.send(root, values.data(), bytes);
    mesh_.recv(root, values.data(), bytes);
    return;
  }
  const std::size_t others = members_.size() - 1;
  std::vector<double> gathered(others * values.size());
  std::vector<TcpMesh::Recv> receives;
  for (std::size_t i = 0; i < others; ++i) {
    receives.push_back({members_[i + 1], gathered.data() + i * values.size(), bytes, {}});
  }
  mesh_.transfer({}, receives);
  for (std::size_t i = 0; i < others; ++i) {
    for (std::size_t j = 0; j < values.size(); ++j) values[j] = std::max(values[j], gathered[i * values.size() + j]);
  }
  std::vector<TcpMesh::Send> sends;
  for (std::size_t i = 0; i < others; ++i) sends.push_back({members_[i + 1], values.data(), bytes});
  mesh_.transfer(sends, {});
}

void exchange(TcpMesh& mesh, int peer, const void* send, void* recv, std::size_t bytes) {
  const TcpMesh::Send out{peer, send, bytes};
  const TcpMesh::Recv in{peer, recv, bytes, {}};
  mesh.transfer(std::span<const TcpMesh::Send>(&out, 1), std::span<const TcpMesh::Recv>(&in, 1));
}

}  // namespace dtperf::calibrate
