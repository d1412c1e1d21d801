#include "nn/mlp.hpp"
#include "util/errors.hpp"


#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

namespace wulf {

std::size_t NetSpec::parameter_count() const {
  if (table) return table->parameter_count();
  std::size_t w = 0;
  for (int l = 1; l <= n_layers(); ++l)
    w += static_cast<std::size_t>(sizes[l]) * static_cast<std::size_t>(sizes[l - 1]) +
         (bias ? static_cast<std::size_t>(sizes[l]) : 0);
  return w;
}

double backward_layer_flops(const std::vector<int>& sizes, bool bias, int l) {
  const double products = 2.0 * sizes[l] * sizes[l - 1], biases = bias ? sizes[l] : 0;
  return products + biases + (l > 1 ? products : 0);
}

KernelFlops kernel_flops(const std::vector<int>& sizes, bool bias) {
  KernelFlops f;
  for (std::size_t l = 1; l < sizes.size(); ++l) {
    const double products = 2.0 * sizes[l] * sizes[l - 1], biases = bias ? sizes[l] : 0;
    f.weights += products / 2 + biases;
    f.forward += products + biases;
    f.backward += backward_layer_flops(sizes, bias, static_cast<int>(l));
  }
  f.update = 4 * f.weights;
  return f;
}

KernelFlops NetSpec::flops() const {
  if (!table) return kernel_flops(sizes, bias);
  KernelFlops f;
  f.weights = static_cast<double>(table->parameter_count());
  f.forward = table->forward_flops();
  f.backward = table->backward_flops();
  f.update = 4 * f.weights;
  return f;
}

double NetSpec::layer_backward_flops(int l) const {
  return table ? table->layers[static_cast<std::size_t>(l - 1)].backward_flops : backward_layer_flops(sizes, bias, l);
}

double NetSpec::layer_forward_flops(int l) const {
  if (table) return table->layers[static_cast<std::size_t>(l - 1)].forward_flops;
  return 2.0 * sizes[l] * sizes[l - 1] + (bias ? sizes[l] : 0);
}

std::size_t NetSpec::layer_parameter_count(int l) const {
  if (table) return table->layers[static_cast<std::size_t>(l - 1)].values();
  return static_cast<std::size_t>(sizes[l]) * static_cast<std::size_t>(sizes[l - 1]) +
         (bias ? static_cast<std::size_t>(sizes[l]) : 0);
}

std::string NetSpec::describe() const {
  std::ostringstream s;
  if (table) {
    s << table->name << " (layers " << table->path << ", " << table->parameter_count() << " parameters)";
    return s.str();
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) s << (i ? "-" : "") << sizes[i];
  s << ' ';
  for (std::size_t i = 0; i < activations.size(); ++i) s << (i ? "/" : "") << to_string(activations[i]);
  s << ' ' << to_string(loss) << (bias ? " bias" : " no-bias");
  return s.str();
}

void NetSpec::validate() const {
  if (table && (sizes.size() != 2 || sizes[0] != table->inputs || sizes[1] != table->outputs))
    throw InputError("network: " + table->name + " is given by its layers (" + table->path +
                     "); it takes no --hidden layers");
  if (sizes.size() < 2) throw InputError("network: needs at least an input and an output layer");
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] <= 0)
      throw InputError("network: layer " + std::to_string(i) + " has " + std::to_string(sizes[i]) +
                       " units; every layer needs at least one");
  if (activations.size() != sizes.size() - 1)
    throw InputError("network: " + std::to_string(activations.size()) + " activations for " +
                     std::to_string(sizes.size() - 1) + " layers");
  for (std::size_t i = 0; i + 1 < activations.size(); ++i)
    if (activations[i] == Activation::softmax)
      throw InputError("--activation: softmax is only available on the output layer");
  if (loss == Loss::cross_entropy && activations.back() != Activation::softmax &&
      activations.back() != Activation::sigmoid)
    throw InputError("--loss ce needs a softmax or sigmoid output layer, not " +
                     std::string(to_string(activations.back())));
}

namespace {

// A = f(Z), in place. Softmax works per column (one pattern) and subtracts the column's
// maximum first so that exp never overflows.
template <class M>
void activate(Activation a, M& z) {
  using T = typename M::Scalar;
  switch (a) {
    case Activation::sigmoid: z = (T(1) + (-z.array()).exp()).inverse().matrix(); break;
    case Activation::tanh: z = z.array().tanh().matrix(); break;
    case Activation::linear: break;
    case Activation::softmax:
      z.rowwise() -= z.colwise().maxCoeff();
      z = z.array().exp().matrix();
      z.array().rowwise() /= z.colwise().sum().array();
      break;
  }
}

// dZ = dA * f'(Z), written with A = f(Z) so that Z need not be kept:
// sigmoid' = a (1 - a), tanh' = 1 - a^2, and for softmax the Jacobian-vector product
// dz_j = a_j (da_j - sum_k da_k a_k).
// da may be an unevaluated expression (the output layer passes y - t, so the error is never
// stored: one pass over the largest matrix instead of two) and dz may be da itself (hidden
// layers work in place): every case reads da(i, j) only to write dz(i, j), and softmax
// takes its column sums before it writes. With clip (--sigmoid-derivative fann) the
// sigmoid's derivative is taken at a clipped to [0.01, 0.99], as FANN 2.2 takes it: a
// saturated unit keeps a derivative of at least 0.0099 and goes on learning.
template <class DA, class M>
void activation_backward(Activation f, const M& a, const DA& da, M& dz, bool clip) {
  using T = typename M::Scalar;
  switch (f) {
    case Activation::sigmoid:
      if (clip) {
        const auto c = a.array().max(T(0.01f)).min(T(0.99f));  // FANN clips in float
        dz = (da.array() * c * (T(1) - c)).matrix();
      } else {
        dz = (da.array() * a.array() * (T(1) - a.array())).matrix();
      }
      break;
    case Activation::tanh: dz = (da.array() * (T(1) - a.array().square())).matrix(); break;
    case Activation::linear: dz = da; break;
    case Activation::softmax: {
      const auto s = (da.array() * a.array()).colwise().sum().eval();  // (1, B)
      dz = (a.array() * (da.array().rowwise() - s)).matrix();
      break;
    }
  }
}

// C (m x n) = op(A) op(B) + beta C, column-major, op(X) = X or X^T as the flag says; with
// beta = 0 C's old values are never read. Eigen's `C.noalias() = A * B` clears C and then
// adds the product to it. Under EIGEN_USE_BLAS (OpenBLAS, core/CMakeLists.txt) this is BLAS's
// GEMM, which writes small products without clearing first; OpenBLAS 0.3.21 still clears C
// (sgemm_beta, a memset) before the larger ones, as the first layer's, for its packed kernel
// adds into C. Without BLAS it is Eigen's product.
template <class T>
void gemm(bool trans_a, bool trans_b, Eigen::Index m, Eigen::Index n, Eigen::Index k, const T* a, const T* b, T beta,
          T* c) {
#ifdef EIGEN_USE_BLAS
  const char ta = trans_a ? 'T' : 'N', tb = trans_b ? 'T' : 'N';
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  const int lda = trans_a ? ik : im, ldb = trans_b ? in : ik;
  const T one = 1;
  if constexpr (std::is_same_v<T, float>)
    sgemm_(&ta, &tb, &im, &in, &ik, &one, a, &lda, b, &ldb, &beta, c, &im);
  else
    dgemm_(&ta, &tb, &im, &in, &ik, &one, a, &lda, b, &ldb, &beta, c, &im);
#else
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  const Eigen::Map<const Matrix> A(a, trans_a ? k : m, trans_a ? m : k), B(b, trans_b ? n : k, trans_b ? k : n);
  Eigen::Map<Matrix> C(c, m, n);
  auto product = [&](const auto& x, const auto& y) {
    if (beta == T(0))
      C.noalias() = x * y;
    else
      C.noalias() += x * y;  // wulf passes beta 0 or 1 only
  };
  if (trans_a && trans_b) product(A.transpose(), B.transpose());
  else if (trans_a) product(A.transpose(), B);
  else if (trans_b) product(A, B.transpose());
  else product(A, B);
#endif
}

}  // namespace

template <class T>
Mlp<T>::Mlp(NetSpec spec, T* storage) : spec_(std::move(spec)) {
  spec_.validate();
  Eigen::Index off = 0;
  if (spec_.table) off = static_cast<Eigen::Index>(spec_.table->parameter_count());  // storage only: no arithmetic
  for (int l = 1; l <= spec_.n_layers() && !spec_.table; ++l) {
    offsets_.push_back(off);
    off += rows(l) * cols(l) + (spec_.bias ? rows(l) : 0);
  }
  count_ = static_cast<std::size_t>(off);
  if (!storage) {
    owned_ = Vector::Zero(2 * off);
    storage = owned_.data();
  }
  params_ = storage;
  grads_ = storage + off;
  acts_.resize(static_cast<std::size_t>(spec_.n_layers()));
  deltas_.resize(static_cast<std::size_t>(spec_.n_layers()));
}

template <class T>
Mlp<T>::Mlp(NetSpec spec) : Mlp(std::move(spec), nullptr) {}

template <class T>
Mlp<T>::Mlp(NetSpec spec, NoStorage) : spec_(std::move(spec)) {
  spec_.validate();
  if (!spec_.table) throw std::logic_error("Mlp without storage: only a net given by its layers has no arithmetic");
  count_ = spec_.table->parameter_count();
}

template <class T>
void Mlp<T>::require_arithmetic() const {
  if (spec_.table)
    throw InputError(spec_.table->name + " (" + spec_.table->path +
                     ") is given by its layers, without their arithmetic: it runs with --numerics off");
}

template <class T>
void Mlp<T>::init_uniform(double range, Rng& rng) {
  require_arithmetic();
  for (int l = 1; l <= spec_.n_layers(); ++l) {
    const double r = range > 0 ? range : 1.0 / std::sqrt(static_cast<double>(cols(l)));
    auto w = weights(l);
    for (Eigen::Index j = 0; j < w.cols(); ++j)
      for (Eigen::Index i = 0; i < w.rows(); ++i) w(i, j) = static_cast<T>(rng.uniform(-r, r));
    auto b = biases(l);
    for (Eigen::Index i = 0; i < b.size(); ++i) b(i) = static_cast<T>(rng.uniform(-r, r));
  }
}

template <class T>
const typename Mlp<T>::Matrix& Mlp<T>::forward(const Matrix& x) {
  begin_forward(x);
  for (int l = 1; l <= spec_.n_layers(); ++l) forward_layer(l);
  return acts_.back();
}

template <class T>
void Mlp<T>::begin_forward(const Matrix& x) {
  require_arithmetic();
  input_ = &x;
}

template <class T>
void Mlp<T>::forward_layer(int l) {
  const Eigen::Index block = input_->cols();
  const Matrix& a_prev = l == 1 ? *input_ : acts_[l - 2];
  Matrix& z = acts_[l - 1];  // (n_l, B): Z_l, then A_l in place
  z.resize(rows(l), block);
  // One pattern is a matrix-vector product; Eigen only picks its GEMV kernel when the
  // operand is a vector at compile time, so learning by pattern takes this path.
  if (block == 1)
    z.col(0).noalias() = weights(l) * a_prev.col(0);
  else
    gemm<T>(false, false, rows(l), block, cols(l), params_ + w_offset(l), a_prev.data(), T(0), z.data());
  if (spec_.bias) z.colwise() += biases(l);
  activate(spec_.activations[l - 1], z);
}

template <class T>
T Mlp<T>::loss_sum(Loss loss, Activation output, const Matrix& y, const Matrix& t) {
  if (loss == Loss::mse) return T(0.5) * (y - t).squaredNorm();
  // log of outputs clamped away from 0: a saturated unit costs -log(min normal), finite.
  const T tiny = std::numeric_limits<T>::min();
  if (output == Activation::softmax) return -(t.array() * y.array().max(tiny).log()).sum();
  return -(t.array() * y.array().max(tiny).log() +
           (T(1) - t.array()) * (T(1) - y.array()).max(tiny).log())
              .sum();
}

template <class T>
T Mlp<T>::backward(const Matrix& targets, bool accumulate) {
  const T loss = backward_output(targets);
  for (int l = spec_.n_layers(); l >= 1; --l) backward_layer(l, accumulate);
  return loss;
}

template <class T>
T Mlp<T>::backward_output(const Matrix& targets) {
  require_arithmetic();
  const Matrix& y = acts_.back();
  const Activation out = spec_.activations.back();
  Matrix& d_out = deltas_.back();
  // With a softmax or sigmoid output the cross-entropy's dE/dZ collapses to y - t.
  if (spec_.loss == Loss::cross_entropy)
    d_out = y - targets;
  else
    activation_backward(out, y, y - targets, d_out, spec_.clip_sigmoid_derivative);
  return loss_sum(spec_.loss, out, y, targets);
}

template <class T>
void Mlp<T>::backward_layer(int l, bool accumulate) {
  require_arithmetic();
  const Matrix& a_prev = l == 1 ? *input_ : acts_[l - 2];
  const Matrix& delta = deltas_[l - 1];  // (n_l, B)
  auto dw = dweights(l);                 // (n_l, n_{l-1}) += delta a_prev^T
  if (delta.cols() == 1) {
    if (accumulate)
      dw.noalias() += delta.col(0) * a_prev.col(0).transpose();
    else
      dw.noalias() = delta.col(0) * a_prev.col(0).transpose();
  } else {
    gemm<T>(false, true, rows(l), cols(l), delta.cols(), delta.data(), a_prev.data(), accumulate ? T(1) : T(0),
            grads_ + w_offset(l));
  }
  if (spec_.bias) {
    if (accumulate)
      dbiases(l) += delta.rowwise().sum();
    else
      dbiases(l) = delta.rowwise().sum();
  }
  if (l > 1) {
    // dE/dA_{l-1} = W_l^T delta goes straight into delta_{l-1}, which then becomes
    // dE/dZ_{l-1} in place. Each delta keeps its shape from block to block, so nothing
    // is allocated here (one scratch matrix shared by layers of different heights was
    // reallocated, and its pages faulted in afresh, twice per block).
    Matrix& d_prev = deltas_[l - 2];
    d_prev.resize(rows(l - 1), delta.cols());
    if (delta.cols() == 1)
      d_prev.col(0).noalias() = weights(l).transpose() * delta.col(0);
    else
      gemm<T>(true, false, rows(l - 1), delta.cols(), rows(l), params_ + w_offset(l), delta.data(), T(0),
              d_prev.data());
    activation_backward(spec_.activations[l - 2], acts_[l - 2], d_prev, d_prev, spec_.clip_sigmoid_derivative);
  }
}

template class Mlp<float>;
template class Mlp<double>;

}  // namespace wulf
