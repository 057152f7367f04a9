// CPU CUDA runtime, Thrust subset: thrust::tuple (std::tuple) and zip_iterator, whose
// element is a tuple of references into the zipped ranges (writes go through).
#pragma once
#include <cstddef>
#include <iterator>
#include <tuple>
#include <utility>

namespace thrust {

using std::get;
using std::make_tuple;
using std::tie;
using std::tuple;
using std::tuple_element;
using std::tuple_size;

template <class IteratorTuple>
class zip_iterator;

template <class... Iterators>
class zip_iterator<std::tuple<Iterators...>> {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::tuple<typename std::iterator_traits<Iterators>::value_type...>;
    using reference = std::tuple<typename std::iterator_traits<Iterators>::reference...>;
    using difference_type = std::ptrdiff_t;
    using pointer = void;

    zip_iterator() = default;
    explicit zip_iterator(std::tuple<Iterators...> iterators) : iterators_(iterators) {}

    reference operator*() const { return dereference(std::index_sequence_for<Iterators...>()); }
    reference operator[](difference_type n) const { return *(*this + n); }
    zip_iterator& operator+=(difference_type n) {
        advance(n, std::index_sequence_for<Iterators...>());
        return *this;
    }
    zip_iterator& operator-=(difference_type n) { return *this += -n; }
    zip_iterator& operator++() { return *this += 1; }
    zip_iterator& operator--() { return *this += -1; }
    zip_iterator operator++(int) { zip_iterator old = *this; *this += 1; return old; }
    zip_iterator operator--(int) { zip_iterator old = *this; *this += -1; return old; }
    zip_iterator operator+(difference_type n) const { zip_iterator moved = *this; return moved += n; }
    zip_iterator operator-(difference_type n) const { zip_iterator moved = *this; return moved += -n; }
    difference_type operator-(const zip_iterator& other) const { return std::get<0>(iterators_) - std::get<0>(other.iterators_); }
    bool operator==(const zip_iterator& other) const { return std::get<0>(iterators_) == std::get<0>(other.iterators_); }
    bool operator!=(const zip_iterator& other) const { return !(*this == other); }
    bool operator<(const zip_iterator& other) const { return (*this - other) < 0; }
    bool operator>(const zip_iterator& other) const { return (*this - other) > 0; }
    bool operator<=(const zip_iterator& other) const { return (*this - other) <= 0; }
    bool operator>=(const zip_iterator& other) const { return (*this - other) >= 0; }
    const std::tuple<Iterators...>& get_iterator_tuple() const { return iterators_; }

  private:
    template <std::size_t... I>
    reference dereference(std::index_sequence<I...>) const { return reference(*std::get<I>(iterators_)...); }
    template <std::size_t... I>
    void advance(difference_type n, std::index_sequence<I...>) { ((std::get<I>(iterators_) += n), ...); }

    std::tuple<Iterators...> iterators_;
};

template <class... Iterators>
inline zip_iterator<std::tuple<Iterators...>> make_zip_iterator(std::tuple<Iterators...> iterators) {
    return zip_iterator<std::tuple<Iterators...>>(iterators);
}
template <class... Iterators>
inline zip_iterator<std::tuple<Iterators...>> make_zip_iterator(Iterators... iterators) {
    return zip_iterator<std::tuple<Iterators...>>(std::make_tuple(iterators...));
}

}  // namespace thrust
