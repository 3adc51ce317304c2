// One half-precision index: hnswlib's HierarchicalNSW over the half space (halfSpace.h), with its labels in
// the addon's map (labelMirror.h) and its file read and written by graphFile.h, the encoding of vectors and queries, and every change of the graph (create, load
// with its checks, add, delete, resize, save). Every argument is checked before hnswlib sees it: hnswlib
// trusts its callers and its own files.

#pragma once

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "errors.h"
#include "graphFile.h"
#include "halfSpace.h"
#include "hnswlib/hnswlib.h"
#include "labelMirror.h"
#include "loadChecks.h"
#include "memory.h"
#include "replaceRepair.h"

namespace arkivector {

constexpr double MAX_DIM = 16000;
constexpr double MAX_LABEL = 4294967294.0;  // uint32, below the all-ones pattern
constexpr double MAX_ELEMENTS = 1 << 30;
constexpr double MAX_M = 2048;
constexpr double MAX_EF = 1 << 20;
constexpr double MAX_K = 1 << 20;

struct Index {
  int metric = METRIC_COSINE;
  int kernel = KERNEL_PORTABLE;
  size_t dim = 0;
  std::unique_ptr<HalfSpace> space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  std::vector<char> scratch;  // one encoded element (a point or a query)
  std::vector<float> query;   // the last encoded values as float32, and their inverse norm
  float invQuery = 0;
  // Searches in flight on other threads (async.h): counted at dispatch on the main thread, and every
  // call that changes the graph waits until none is left. Both happen on the main thread, so no search
  // starts while a change waits.
  std::mutex readersLock;
  std::condition_variable readersDone;
  size_t readers = 0;

  Index(int metric_, size_t dim_, int kernel_)
      : metric(metric_), kernel(kernel_), dim(dim_), space(new HalfSpace(metric_, dim_, kernel_)) {
    scratch.assign(elementSize(), 0);
  }

  // The graph's labels (hnswlib's label map in the addon's copy of its headers): read by the filtered walk
  // and the exact scan of an allowed set.
  const LabelMirror& labels() const { return hnsw->label_lookup_; }

  void waitForReaders() {
    std::unique_lock<std::mutex> lock(readersLock);
    readersDone.wait(lock, [this] { return readers == 0; });
  }

  size_t elementSize() const { return 4 + 2 * dim; }

  // Encodes float32 values (`halves` false) or binary16 patterns into `scratch`, and the values as float32
  // into `query`; refuses a length other than dim, NaN and infinities.
  const void* encode(const void* data, size_t length, bool halves, const char* what) {
    if (length != dim)
      throw ArgError(std::string(what) + " has " + std::to_string(length) + " values, expected " + std::to_string(dim));
    uint16_t* out = reinterpret_cast<uint16_t*>(scratch.data() + 4);
    query.resize(dim);
    double qs = 0;
    if (!halves) {
      const float* f = static_cast<const float*>(data);
      for (size_t i = 0; i < dim; i++) {
        if (!std::isfinite(f[i])) throw ArgError(std::string(what) + "[" + std::to_string(i) + "] is not finite");
        qs += (double)f[i] * f[i];
      }
      std::memcpy(query.data(), f, dim * sizeof(float));
      toHalves(f, out, dim);
    } else {
      const uint16_t* h = static_cast<const uint16_t*>(data);
      for (size_t i = 0; i < dim; i++) {
        if ((h[i] & 0x7c00) == 0x7c00)
          throw ArgError(std::string(what) + "[" + std::to_string(i) + "] is not a finite binary16");
        out[i] = h[i];
        query[i] = H2F[h[i]];
        qs += (double)query[i] * query[i];
      }
    }
    invQuery = qs > 0 ? (float)(1.0 / std::sqrt(qs)) : 0.0f;
    double s = 0;
    for (size_t i = 0; i < dim; i++) {
      const double x = H2F[out[i]];
      s += x * x;
    }
    const float inv = s > 0 ? (float)(1.0 / std::sqrt(s)) : 0.0f;
    std::memcpy(scratch.data(), &inv, 4);
    return scratch.data();
  }

  // An empty graph.
  void create(size_t maxElements, size_t m, size_t efConstruction, size_t seed) {
    hnsw.reset(new hnswlib::HierarchicalNSW<float>(space.get(), maxElements, m, efConstruction, seed, true));
    adviseHugePages(*hnsw, false);
  }

  // A graph written by save, checked before and after hnswlib reads it; `m` 0 takes the file's.
  void load(const std::string& path, size_t m, size_t maxElements) {
    const Header file = checkHeader(path, m);
    // Never the capacity saved in the file (a damaged one could ask for any amount of memory).
    const size_t capacity = std::max<size_t>(std::max<size_t>(file.count, maxElements), 16);
    hnsw.reset(new hnswlib::HierarchicalNSW<float>(space.get(), capacity, file.m, file.efc, 0, true));
    // Advised before it is written, so level 0 is read straight into huge pages.
    adviseHugePages(*hnsw, false);
    readGraph(*hnsw, path, file.count, (size_t)MAX_LABEL);
    if (const char* why = graphDamage(*hnsw, (hnswlib::labeltype)MAX_LABEL))
      throw JsError(std::string("the index file is damaged (") + why + ")");
  }

  // Adds or updates the element under a label (`element` encoded); `replace` reuses a deleted slot.
  void add(const void* element, size_t label, bool replace) {
    auto& h = *hnsw;
    const bool reuses = replace && h.getDeletedCount() > 0;
    const uint32_t held = h.label_lookup_.at(label);  // deleted or not
    // An update of an existing label needs no room.
    if (!reuses && held == LabelMirror::NONE && h.cur_element_count >= h.max_elements_)
      throw JsError("the index is full (" + std::to_string(h.max_elements_) + " elements): resize it first");
    // A label the index holds is updated in its own slot: hnswlib's replacement would take another deleted
    // slot for it and leave the old element answering under the same label (a ghost of the old vector).
    if (held != LabelMirror::NONE) {
      if (h.isMarkedDeleted(held)) h.unmarkDelete(label);
      h.addPoint(element, label, false);
    } else if (reuses) {
      // Reusing a deleted slot: arkivector's replacement, which repairs the old neighbourhood too.
      replaceDeleted(h, element, label);
    } else {
      h.addPoint(element, label, false);
    }
  }

  void remove(size_t label) { hnsw->markDelete(label); }

  void resize(size_t maxElements) {
    if (maxElements < hnsw->cur_element_count) throw JsError("cannot resize below the current element count");
    hnsw->resizeIndex(maxElements);
    // A block that grows past HUGE_PAGE_MIN holds its written elements on small pages until collapsed.
    adviseHugePages(*hnsw, true);
    releaseFreedPages();
  }

  void save(const std::string& path) {
    {
      std::ofstream probe(path, std::ios::binary | std::ios::trunc);
      if (!probe.is_open()) throw JsError("cannot write " + path);
    }
    writeGraph(*hnsw, path);
    std::ifstream check(path, std::ios::binary | std::ios::ate);
    if (!check.is_open() || check.tellg() <= 0) throw JsError("writing " + path + " failed");
  }

  // The binary16 values stored under a label (dim of them) into `out`.
  void copyHalves(size_t label, uint16_t* out) {
    const uint32_t id = labels().idOf(label);
    if (id == LabelMirror::NONE) throw JsError("label not found");
    std::memcpy(out, halvesOf(hnsw->getDataByInternalId(id)), 2 * dim);
  }

 private:
  struct Header {
    size_t count, m, efc;
  };

  // A saved file's header, checked before it is read (graphFile.h): it says how much to allocate.
  Header checkHeader(const std::string& path, size_t m) const {
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open()) throw JsError("cannot open " + path);
    in.seekg(0, in.end);
    const long long fileSize = (long long)in.tellg();
    in.seekg(0, in.beg);
    size_t offsetLevel0, maxElements, count, sizePer, labelOffset, offsetData, maxM, maxM0, mm, efc;
    int maxLevel;
    unsigned enter;
    double mult;
    in.read((char*)&offsetLevel0, 8).read((char*)&maxElements, 8).read((char*)&count, 8).read((char*)&sizePer, 8);
    in.read((char*)&labelOffset, 8).read((char*)&offsetData, 8).read((char*)&maxLevel, 4).read((char*)&enter, 4);
    in.read((char*)&maxM, 8).read((char*)&maxM0, 8).read((char*)&mm, 8).read((char*)&mult, 8).read((char*)&efc, 8);
    if (!in) throw JsError("the index file is too short");
    const size_t header = 8 * 6 + 4 + 4 + 8 * 5;
    const size_t links0 = maxM0 * 4 + 4;
    const bool ok = count <= MAX_ELEMENTS && offsetLevel0 == 0 && mm >= 2 && mm <= MAX_M && (m == 0 || mm == m) &&
                    maxM == mm && maxM0 == 2 * mm && offsetData == links0 && labelOffset == offsetData + elementSize() &&
                    sizePer == labelOffset + sizeof(hnswlib::labeltype) && count <= maxElements && efc >= 1 &&
                    efc <= MAX_EF && std::isfinite(mult) && std::fabs(mult * std::log((double)mm) - 1.0) < 1e-9 &&
                    (long long)(header + count * sizePer + count * 4) <= fileSize &&
                    (count == 0 || (enter < count && maxLevel >= 0 && maxLevel < 64));
    if (!ok) throw JsError("the index file does not match this index (dim, metric, m) or is damaged");
    return {count, mm, efc};
  }
};

}  // namespace arkivector
