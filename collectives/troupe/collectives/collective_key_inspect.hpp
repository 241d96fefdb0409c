#pragma once

// CAF's inspect() for CollectiveKey, which the messages that carry one need
// to be inspectable (CAF prints the key with to_string). Internal: not
// installed, so that the public collective_key.hpp stays free of CAF.

#include <caf/meta/type_name.hpp>

#include <troupe/collectives/collective_key.hpp>

namespace troupe {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CollectiveKey& x) {
  return f(caf::meta::type_name("troupe::CollectiveKey"), x.group, x.run, x.seq);
}

} // namespace troupe
