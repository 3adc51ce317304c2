// A graph's file: hnswlib's own format (saveIndex / loadIndex), byte for byte, so files written before the
// addon kept labels outside the elements load as they are, and a file written now is the one hnswlib would
// write. hnswlib's format keeps each element's 8-byte label after its vector; in memory the element has no
// label (the addon's copy of hnswlib keeps labels in labelMirror.h), so writing inserts it and reading
// takes it out. The header is checked before (index.h checkHeader) and the links after (loadChecks.h).

#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "errors.h"
#include "hnswlib/hnswlib.h"

namespace arkivector {

// Elements copied per read or write of level 0 (one buffer of this many file records).
constexpr size_t FILE_CHUNK = 4096;

template <typename T>
void put(std::ofstream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
void get(std::ifstream& in, T& v) {
  in.read(reinterpret_cast<char*>(&v), sizeof(T));
}

/** The bytes of one element in hnswlib's file: its level-0 record and its 8-byte label. */
inline size_t fileElementBytes(const hnswlib::HierarchicalNSW<float>& h) {
  return h.size_data_per_element_ + sizeof(hnswlib::labeltype);
}

inline void writeGraph(const hnswlib::HierarchicalNSW<float>& h, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out.is_open()) throw JsError("cannot write " + path);
  const size_t count = h.cur_element_count;
  const size_t record = fileElementBytes(h);
  const size_t labelOffset = h.size_data_per_element_;
  put(out, h.offsetLevel0_);
  put(out, h.max_elements_);
  put(out, count);
  put(out, record);
  put(out, labelOffset);
  put(out, h.offsetData_);
  put(out, h.maxlevel_);
  put(out, h.enterpoint_node_);
  put(out, h.maxM_);
  put(out, h.maxM0_);
  put(out, h.M_);
  put(out, h.mult_);
  put(out, h.ef_construction_);
  std::vector<char> buffer(std::min(count, FILE_CHUNK) * record);
  for (size_t from = 0; from < count; from += FILE_CHUNK) {
    const size_t n = std::min(FILE_CHUNK, count - from);
    for (size_t i = 0; i < n; i++) {
      char* r = buffer.data() + i * record;
      std::memcpy(r, h.data_level0_memory_ + (from + i) * h.size_data_per_element_, h.size_data_per_element_);
      const hnswlib::labeltype label = h.getExternalLabel((hnswlib::tableint)(from + i));
      std::memcpy(r + labelOffset, &label, sizeof(label));
    }
    out.write(buffer.data(), (std::streamsize)(n * record));
  }
  for (size_t i = 0; i < count; i++) {
    const unsigned size = h.element_levels_[i] > 0 ? (unsigned)(h.size_links_per_element_ * h.element_levels_[i]) : 0;
    put(out, size);
    if (size > 0) out.write(h.linkLists_[i], size);
  }
  out.close();
  if (!out) throw JsError("writing " + path + " failed");
}

/**
 * Fills `h`, made empty with room for the file's `count` elements and the file's m, from a file whose
 * header index.h checked. Labels above `maxLabel` and upper-level lists of a size that is not a whole
 * number of levels are damage.
 */
inline void readGraph(hnswlib::HierarchicalNSW<float>& h, const std::string& path, size_t count, size_t maxLabel) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) throw JsError("cannot open " + path);
  size_t offsetLevel0, maxElements, fileCount, record, labelOffset, offsetData, maxM, maxM0, m, efc;
  int maxLevel;
  unsigned enter;
  double mult;
  get(in, offsetLevel0);
  get(in, maxElements);
  get(in, fileCount);
  get(in, record);
  get(in, labelOffset);
  get(in, offsetData);
  get(in, maxLevel);
  get(in, enter);
  get(in, maxM);
  get(in, maxM0);
  get(in, m);
  get(in, mult);
  get(in, efc);
  if (!in || fileCount != count || record != fileElementBytes(h) || labelOffset != h.size_data_per_element_)
    throw JsError("the index file does not match this index (dim, metric, m) or is damaged");
  h.maxlevel_ = maxLevel;
  h.enterpoint_node_ = enter;
  h.ef_construction_ = efc;
  h.mult_ = mult;
  h.revSize_ = 1.0 / mult;
  // As hnswlib's loadIndex leaves them: default-seeded, so nodes that load one file insert alike.
  h.level_generator_ = std::default_random_engine();
  h.update_probability_generator_ = std::default_random_engine();
  const auto damaged = [](const char* why) { return JsError(std::string("the index file is damaged (") + why + ")"); };
  std::vector<char> buffer(std::min(count, FILE_CHUNK) * record);
  for (size_t from = 0; from < count; from += FILE_CHUNK) {
    const size_t n = std::min(FILE_CHUNK, count - from);
    if (!in.read(buffer.data(), (std::streamsize)(n * record))) throw JsError("the index file is too short");
    for (size_t i = 0; i < n; i++) {
      const char* r = buffer.data() + i * record;
      std::memcpy(h.data_level0_memory_ + (from + i) * h.size_data_per_element_, r, h.size_data_per_element_);
      hnswlib::labeltype label;
      std::memcpy(&label, r + labelOffset, sizeof(label));
      if (label > maxLabel) throw damaged("labels");
      h.setExternalLabel((hnswlib::tableint)(from + i), label);
    }
  }
  h.cur_element_count = count;
  for (size_t i = 0; i < count; i++) {
    unsigned size;
    get(in, size);
    if (!in) throw JsError("the index file is too short");
    h.linkLists_[i] = nullptr;
    h.element_levels_[i] = 0;
    if (size == 0) continue;
    if (size % h.size_links_per_element_ != 0 || size / h.size_links_per_element_ > 64) throw damaged("levels");
    h.linkLists_[i] = static_cast<char*>(malloc(size));
    if (h.linkLists_[i] == nullptr) throw JsError("not enough memory for the index file's upper levels");
    h.element_levels_[i] = (int)(size / h.size_links_per_element_);
    if (!in.read(h.linkLists_[i], size)) throw JsError("the index file is too short");
  }
  if (in.peek() != std::ifstream::traits_type::eof()) throw damaged("trailing bytes");
  // The label map: live elements win over deleted ones that held the same label.
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < count; i++) {
      const bool dead = h.isMarkedDeleted((hnswlib::tableint)i);
      if (dead != (pass == 0)) continue;
      h.label_lookup_.setDead(i, dead);
      h.label_lookup_[h.getExternalLabel((hnswlib::tableint)i)] = (hnswlib::tableint)i;
      if (dead) {
        h.num_deleted_ += 1;
        h.deleted_elements.insert((hnswlib::tableint)i);
      }
    }
  }
}

}  // namespace arkivector
