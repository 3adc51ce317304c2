// A mirror of hnswlib's label ↔ internal id maps in flat arrays, kept by the addon after every change
// of a label (add, update, delete, replacement of a deleted element) and rebuilt after a load. hnswlib
// keeps the label of an element inside the element (a cache miss away for a random id, and its deleted
// mark on another cache line) and the reverse in an unordered_map behind a mutex: the filtered walk
// tests thousands of elements per query, and the exact scan of an allowed set looks up every allowed
// label. Here both are one read of an array of uint32.
//
// arkivector assigns labels densely (0, 1, 2, … and compacted by every rebuild), so the label → id
// array is about as long as the graph; a label far above that (another user of the addon) turns the
// array off and the lookups go back to hnswlib's map.

#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "hnswlib/hnswlib.h"

namespace arkivector {

class LabelMirror {
 public:
  /** No element / no label (labels are below it: the addon refuses the all-ones pattern). */
  static constexpr uint32_t NONE = 0xffffffffu;

  /** Every element's label as hnswlib holds it (after a load). */
  void rebuild(const hnswlib::HierarchicalNSW<float>& h) {
    labels_.assign(h.cur_element_count, NONE);
    ids_.clear();
    dense_ = true;
    for (size_t id = 0; id < h.cur_element_count; id++) {
      if (h.isMarkedDeleted((hnswlib::tableint)id)) continue;
      set((hnswlib::tableint)id, (uint32_t)h.getExternalLabel((hnswlib::tableint)id), h);
    }
  }

  /** After any change of `label` in hnswlib (added, updated, deleted, or placed in a deleted element). */
  void sync(const hnswlib::HierarchicalNSW<float>& h, hnswlib::labeltype label) {
    hnswlib::tableint id;
    {
      std::unique_lock<std::mutex> lock(h.label_lookup_lock);
      auto it = h.label_lookup_.find(label);
      if (it == h.label_lookup_.end()) {
        forget((uint32_t)label);
        return;
      }
      id = it->second;
    }
    if (id >= labels_.size()) labels_.resize(std::max<size_t>(id + 1, h.max_elements_), NONE);
    if (h.isMarkedDeleted(id)) {
      labels_[id] = NONE;
      forget((uint32_t)label);
    } else {
      set(id, (uint32_t)label, h);
    }
  }

  /** The label of a live element, or NONE (deleted, or no such element). */
  uint32_t labelOf(hnswlib::tableint id) const { return id < labels_.size() ? labels_[id] : NONE; }

  /** The internal id of a live label, or NONE (absent or deleted). */
  uint32_t idOf(const hnswlib::HierarchicalNSW<float>& h, hnswlib::labeltype label) const {
    if (dense_) return label < ids_.size() ? ids_[label] : NONE;
    std::unique_lock<std::mutex> lock(h.label_lookup_lock);
    auto it = h.label_lookup_.find(label);
    if (it == h.label_lookup_.end() || labelOf(it->second) == NONE) return NONE;
    return it->second;
  }

  bool dense() const { return dense_; }

 private:
  // Labels up to this many times the capacity (and at least DENSE_MIN) keep the label → id array.
  static constexpr size_t DENSE_FACTOR = 4;
  static constexpr size_t DENSE_MIN = 1 << 20;

  void set(hnswlib::tableint id, uint32_t label, const hnswlib::HierarchicalNSW<float>& h) {
    if (id >= labels_.size()) labels_.resize(std::max<size_t>(id + 1, h.max_elements_), NONE);
    labels_[id] = label;
    if (!dense_) return;
    if (label >= std::max(DENSE_MIN, DENSE_FACTOR * h.max_elements_)) {
      dense_ = false;
      std::vector<uint32_t>().swap(ids_);
      return;
    }
    if (label >= ids_.size()) ids_.resize(std::max<size_t>(label + 1, ids_.size() + ids_.size() / 8), NONE);
    ids_[label] = id;
  }

  void forget(uint32_t label) {
    if (dense_ && label < ids_.size()) ids_[label] = NONE;
  }

  std::vector<uint32_t> labels_;  // internal id → label, NONE when deleted
  std::vector<uint32_t> ids_;     // label → internal id, NONE when absent or deleted (while dense_)
  bool dense_ = true;
};

}  // namespace arkivector
