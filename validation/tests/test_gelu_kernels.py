"""gelu_kernels.py's reading of a profiled step: which kernels are GPT-2's GELU chain's."""

import unittest

import gelu_kernels


class GeluKernelsTest(unittest.TestCase):
    def test_kinds(self):
        # Names as torch.profiler writes them (shortened), one of each kind.
        mul = "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
        self.assertEqual(gelu_kernels.kind_of(mul + "at::native::binary_internal::MulFunctor<float> >"),
                         "scalar multiply")
        self.assertEqual(gelu_kernels.kind_of("at::native::BinaryFunctor<float, float, float, "
                                              "at::native::binary_internal::MulFunctor<float> >"), "tensor multiply")
        # The backward's name contains the forward's: it must be told apart.
        self.assertEqual(gelu_kernels.kind_of("at::native::tanh_backward_kernel_cuda(at::TensorIteratorBase&)"),
                         "tanh backward")
        self.assertEqual(gelu_kernels.kind_of("at::native::tanh_kernel_cuda(at::TensorIteratorBase&)"), "tanh")
        self.assertEqual(gelu_kernels.kind_of("pow_tensor_scalar_kernel_impl<float, float>"), "pow")
        self.assertEqual(gelu_kernels.kind_of("at::native::CUDAFunctorOnSelf_add<float>"), "scalar add")
        # A scalar add through AUnaryFunctor is not a multiplication, nor is a tensor add.
        self.assertIsNone(gelu_kernels.kind_of(mul + "at::native::CUDAFunctor_add<float> >"))
        self.assertIsNone(gelu_kernels.kind_of("at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>"))

    def test_bytes_per_element(self):
        # zoo/llm.cpp's count: 18 + 28 accesses at 4 bytes in fp32. In 16 bits, forward: 14
        # fp32 and 4 16-bit accesses and two casts (4 + 2 bytes each), 76; backward: 19 fp32
        # and 9 16-bit accesses and four casts, 118.
        self.assertEqual(gelu_kernels.CHAIN_BYTES["tf32"], (18 + 28) * 4)
        self.assertEqual(gelu_kernels.CHAIN_BYTES["bf16"], 14 * 4 + 4 * 2 + 2 * 6 + 19 * 4 + 9 * 2 + 4 * 6)


if __name__ == "__main__":
    unittest.main()
