#include "storage/gpu_identity.h"

namespace vw::storage {

Status GpuIdentityStore::Init() {
  VW_RETURN_IF_ERROR(db_.Exec(
      "CREATE TABLE IF NOT EXISTS gpu_identities (gpu TEXT PRIMARY KEY, uuid TEXT NOT NULL, since REAL NOT NULL)"));
  auto p = db_.Prepare("INSERT OR REPLACE INTO gpu_identities (gpu, uuid, since) VALUES (?,?,?)");
  if (!p.ok()) return p.status();
  put_ = std::move(*p);
  auto a = db_.Prepare("SELECT gpu, uuid, since FROM gpu_identities ORDER BY gpu");
  if (!a.ok()) return a.status();
  all_ = std::move(*a);
  return Status::Ok();
}

Status GpuIdentityStore::WritePending() {
  for (const auto& [gpu, id] : pending_) {
    put_.Bind(1, gpu);
    put_.Bind(2, id.uuid);
    put_.Bind(3, id.since_s);
    Status s = put_.Run();
    if (!s.ok()) {
      put_.Reset();
      return s.WithContext("write the identity of GPU " + gpu);
    }
  }
  return Status::Ok();
}

Result<std::map<std::string, GpuIdentity>> GpuIdentityStore::All() {
  std::map<std::string, GpuIdentity> out;
  Status read = all_.ForEachRow([&](const Statement& st) {
    out[st.ColumnText(0)] = GpuIdentity{st.ColumnText(1), st.ColumnDouble(2)};
  });
  if (!read.ok()) return read.WithContext("read the GPU identities");
  for (const auto& [gpu, id] : pending_) out[gpu] = id;
  return out;
}

}  // namespace vw::storage
