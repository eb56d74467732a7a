#include "actors/session_meter.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <string_view>

namespace gleam::actors {

void session_meter::on_open(uint64_t session, const std::string& client_id,
                            const std::string& signature, const std::string& tenant,
                            uint64_t now_ns) {
  auto& r = open_[session];
  if (r.opened_ns != 0)
    return; // a resumed session keeps its record
  r.client_id = client_id;
  r.signature = signature;
  r.tenant = tenant;
  r.opened_ns = now_ns;
}

bool session_meter::on_batch(const proto::OpBatch& batch, uint64_t begin_ns, uint64_t end_ns,
                             uint64_t allocated_bytes) {
  auto i = open_.find(batch.session());
  if (i == open_.end())
    return false;
  auto& r = i->second;
  bool first = false;
  for (const auto& op : batch.ops()) {
    switch (op.kind_case()) {
      case proto::Op::kMemcpyHtod:
        r.uploaded_bytes += op.memcpy_htod().data().size();
        r.weight_bytes += op.memcpy_htod().data().size();
        break;
      case proto::Op::kMemcpy2D:
        if (op.memcpy_2d().kind() == proto::Memcpy2D::HTOD) {
          r.uploaded_bytes += op.memcpy_2d().data().size();
          r.weight_bytes += op.memcpy_2d().data().size();
        }
        break;
      case proto::Op::kCacheFill:
        for (auto size : op.cache_fill().sizes())
          r.weight_bytes += size;
        for (const auto& key : op.cache_fill().keys()) {
          r.key_sample.insert(key);
          if (r.key_sample.size() > key_sample_size)
            r.key_sample.erase(std::prev(r.key_sample.end()));
        }
        break;
      case proto::Op::kCacheUpload:
        r.uploaded_bytes += op.cache_upload().data().size();
        break;
      case proto::Op::kGraphLaunch:
        ++r.launches;
        break;
      case proto::Op::kLaunchKernel:
        ++r.launches;
        if (r.first_launch_ns == 0) {
          r.first_launch_ns = std::max(begin_ns, r.opened_ns + 1);
          first = true;
        }
        break;
      default:
        break;
    }
  }
  if (end_ns > begin_ns)
    r.busy_ns += end_ns - begin_ns;
  r.peak_allocated_bytes = std::max(r.peak_allocated_bytes, allocated_bytes);
  return first;
}

void session_meter::on_reply(const proto::OpBatch& batch, const proto::BatchReply& reply) {
  auto i = open_.find(batch.session());
  if (i == open_.end())
    return;
  auto& r = i->second;
  ++r.batches;
  r.batch_bytes += batch.ByteSizeLong();
  r.reply_bytes += reply.ByteSizeLong();
  // The client's counts are cumulative; a resent batch repeats them.
  r.client_waits = std::max(r.client_waits, batch.client_waits());
  r.client_wait_ns = std::max(r.client_wait_ns, batch.client_wait_ns());
  std::map<uint64_t, const proto::Op*> fills;
  for (const auto& op : batch.ops())
    if (op.kind_case() == proto::Op::kCacheFill)
      fills.emplace(op.seq(), &op);
  for (const auto& result : reply.results()) {
    if (result.payload_case() == proto::OpResult::kData)
      r.downloaded_bytes += result.data().size();
    if (result.payload_case() != proto::OpResult::kCacheFilled)
      continue;
    auto f = fills.find(result.seq());
    if (f == fills.end())
      continue;
    auto keys = static_cast<uint64_t>(f->second->cache_fill().keys_size());
    auto missing = std::min<uint64_t>(keys, result.cache_filled().missing_size());
    r.cache_misses += missing;
    r.cache_hits += keys - missing;
  }
}

bool session_meter::by_digest::operator()(const std::string& a, const std::string& b) const {
  // Byte 0 names the algorithm; the digest follows.
  auto digest = [](const std::string& k) {
    return std::string_view{k}.substr(std::min<size_t>(1, k.size()));
  };
  auto da = digest(a);
  auto db = digest(b);
  return da != db ? da < db : a < b;
}

uint64_t session_meter::overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  auto lo = std::max(a0, b0);
  auto hi = std::min(a1, b1);
  return hi > lo ? hi - lo : 0;
}

bool session_meter::on_close(uint64_t session, uint64_t now_ns, uint32_t gpu_index,
                             const std::string& gpu_name, proto::SessionEnded& out) {
  auto i = open_.find(session);
  if (i == open_.end())
    return false;
  auto r = std::move(i->second);
  open_.erase(i);
  r.closed_ns = std::max(now_ns, r.opened_ns);
  auto launch = r.first_launch_ns != 0 ? r.first_launch_ns : r.closed_ns;
  out.Clear();
  out.set_session(session);
  out.set_client_id(r.client_id);
  out.set_task_signature(r.signature);
  out.set_tenant(r.tenant);
  out.set_gpu_index(gpu_index);
  out.set_gpu_name(gpu_name);
  out.set_opened_time_ns(r.opened_ns);
  out.set_duration_ns(r.closed_ns - r.opened_ns);
  out.set_load_ns(launch - r.opened_ns);
  out.set_uploaded_bytes(r.uploaded_bytes);
  out.set_weight_bytes(r.weight_bytes);
  for (const auto& key : r.key_sample)
    out.add_chunk_keys_sample(key);
  r.key_sample.clear(); // the history needs only the phases
  out.set_peak_allocated_bytes(r.peak_allocated_bytes);
  out.set_busy_ns(r.busy_ns);
  out.set_kernel_launches(r.launches);
  // Overlap of each phase with the same phase of every other session.
  auto add = [&](const record& o, uint64_t o_end) {
    auto o_launch = o.first_launch_ns != 0 ? std::min(o.first_launch_ns, o_end) : o_end;
    auto load = overlap(r.opened_ns, launch, o.opened_ns, o_launch);
    auto compute = overlap(launch, r.closed_ns, o_launch, o_end);
    if (load == 0 && compute == 0)
      return;
    auto* c = out.add_co_runners();
    c->set_task_signature(o.signature);
    c->set_load_overlap_ns(load);
    c->set_compute_overlap_ns(compute);
  };
  for (const auto& [id, o] : open_)
    add(o, r.closed_ns);
  for (const auto& [id, o] : ended_)
    add(o, o.closed_ns);
  ended_.emplace_back(session, std::move(r));
  while (!ended_.empty() && ended_.front().second.closed_ns + history_ns < now_ns)
    ended_.pop_front();
  return true;
}

void session_meter::annotate(proto::SessionSummary& summary) const {
  auto i = open_.find(summary.session());
  if (i == open_.end())
    return;
  summary.set_task_signature(i->second.signature);
  summary.set_first_launch_time_ns(i->second.first_launch_ns);
  const auto& r = i->second;
  summary.set_uploaded_bytes(r.uploaded_bytes);
  summary.set_kernel_launches(r.launches);
  summary.set_downloaded_bytes(r.downloaded_bytes);
  summary.set_batches(r.batches);
  summary.set_batch_bytes(r.batch_bytes);
  summary.set_reply_bytes(r.reply_bytes);
  summary.set_cache_hits(r.cache_hits);
  summary.set_cache_misses(r.cache_misses);
  summary.set_client_waits(r.client_waits);
  summary.set_client_wait_ns(r.client_wait_ns);
}

} // namespace gleam::actors
