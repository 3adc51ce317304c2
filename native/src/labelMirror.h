// The graph's one label ↔ element map. hnswlib keeps each element's 8-byte label inside the element and the
// reverse in an unordered_map (tens of bytes per element); the addon's copy of hnswlib's headers (made by
// native/build.mjs) holds both here instead, as hnswlib's `label_lookup_` and behind its getExternalLabel /
// setExternalLabel, so the graph keeps every label once, in flat arrays of uint32. The filtered walk tests
// thousands of elements per query and the exact scan of an allowed set looks up every allowed label: here
// both are one read of an array, where a deleted element reads NONE (its mark in the element is a cache
// miss away); the labels deleted elements still hold (hnswlib's files carry them, and a replacement reads
// the one it replaces) wait beside, in a hash map as small as the deleted count.
//
// arkivector assigns labels densely (0, 1, 2, … and compacted by every rebuild), so the label → id array is
// about as long as the graph; a label far above that (another user of the addon) moves the map to a hash map.

#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace arkivector {

class LabelMirror {
 public:
  /** No element / no label (labels are below it: the addon refuses the all-ones pattern). */
  static constexpr uint32_t NONE = 0xffffffffu;

  // ---- what hnswlib's code calls, as it called its unordered_map<label, id> ----

  /** An entry as hnswlib's code reads it (`it->second`), or `end()` (second NONE). */
  struct Entry {
    size_t first;
    uint32_t second;
    const Entry* operator->() const { return this; }
    bool operator==(const Entry& o) const { return second == o.second; }
    bool operator!=(const Entry& o) const { return second != o.second; }
  };
  struct Assign {
    LabelMirror& map;
    size_t label;
    void operator=(uint32_t id) { map.setId(label, id); }
  };

  /** The element holding `label`, deleted or not. */
  Entry find(size_t label) const { return {label, idAny(label)}; }
  Entry end() const { return {0, NONE}; }
  uint32_t at(size_t label) const { return idAny(label); }
  Assign operator[](size_t label) { return {*this, label}; }
  void erase(size_t label) { setId(label, NONE); }

  // ---- element → label (hnswlib's getExternalLabel / setExternalLabel) ----

  /** The label an element holds, deleted or not. */
  uint32_t labelAt(size_t id) const {
    if (id >= labels_.size()) return NONE;
    if (labels_[id] != NONE || deadLabels_.empty()) return labels_[id];
    auto it = deadLabels_.find((uint32_t)id);
    return it == deadLabels_.end() ? NONE : it->second;
  }

  void setLabel(size_t id, size_t label) {
    if (id >= labels_.size()) grow(labels_, id + 1, NONE);
    if (!deadLabels_.empty()) {
      auto it = deadLabels_.find((uint32_t)id);
      if (it != deadLabels_.end()) {
        it->second = (uint32_t)label;
        return;
      }
    }
    labels_[id] = (uint32_t)label;
  }

  /** Kept by hnswlib's markDeletedInternal / unmarkDeletedInternal (patched in) and by a load. */
  void setDead(size_t id, bool dead) {
    if (id >= labels_.size()) grow(labels_, id + 1, NONE);
    if (dead) {
      if (deadLabels_.count((uint32_t)id) != 0) return;
      deadLabels_[(uint32_t)id] = labels_[id];
      labels_[id] = NONE;
      return;
    }
    auto it = deadLabels_.find((uint32_t)id);
    if (it == deadLabels_.end()) return;
    labels_[id] = it->second;
    deadLabels_.erase(it);
  }

  // ---- what the walks and scans read ----

  /** The label of a live element, or NONE (deleted, or no such element). */
  uint32_t labelOf(size_t id) const { return id < labels_.size() ? labels_[id] : NONE; }

  /** The element of a live label, or NONE (absent or deleted). */
  uint32_t idOf(size_t label) const {
    const uint32_t id = idAny(label);
    return id == NONE || labelOf(id) == NONE ? NONE : id;
  }

  bool dense() const { return dense_; }

 private:
  // Labels below max(DENSE_MIN, DENSE_FACTOR × elements) keep the label → id array.
  static constexpr size_t DENSE_FACTOR = 4;
  static constexpr size_t DENSE_MIN = 1 << 20;

  // Grows in steps of an eighth: the arrays are written as they grow, and a doubling would leave up to half
  // of them paid for and unused.
  template <typename T>
  static void grow(std::vector<T>& a, size_t min, T fill) {
    if (min > a.capacity()) a.reserve(std::max(min, a.capacity() + a.capacity() / 8));
    a.resize(min, fill);
  }

  uint32_t idAny(size_t label) const {
    if (dense_) return label < ids_.size() ? ids_[label] : NONE;
    auto it = sparse_.find(label);
    return it == sparse_.end() ? NONE : it->second;
  }

  void setId(size_t label, uint32_t id) {
    if (dense_ && id != NONE && label >= std::max(DENSE_MIN, DENSE_FACTOR * labels_.size())) {
      for (size_t l = 0; l < ids_.size(); l++)
        if (ids_[l] != NONE) sparse_[l] = ids_[l];
      std::vector<uint32_t>().swap(ids_);
      dense_ = false;
    }
    if (!dense_) {
      if (id == NONE)
        sparse_.erase(label);
      else
        sparse_[label] = id;
      return;
    }
    if (label >= ids_.size()) {
      if (id == NONE) return;
      grow(ids_, label + 1, NONE);
    }
    ids_[label] = id;
  }

  std::vector<uint32_t> labels_;  // element → label, NONE when deleted
  std::unordered_map<uint32_t, uint32_t> deadLabels_;  // deleted element → the label it holds
  std::vector<uint32_t> ids_;     // label → element, NONE when absent (while dense_)
  std::unordered_map<size_t, uint32_t> sparse_;
  bool dense_ = true;
};

}  // namespace arkivector
