// stage C: 1x1x1 groups of 32x32x1
__kernel void tb_k0(__global float *restrict T_A, __global float *restrict T_B, __global float *restrict T_C) {
  {
    const int v_C_i_0 = (int)get_group_id(1);
    {
      const int v_C_j_0 = (int)get_group_id(0);
      for (int v_C_i_1 = 0; v_C_i_1 < 1; ++v_C_i_1) {
        for (int v_C_j_1 = 0; v_C_j_1 < 1; ++v_C_j_1) {
          {
            const int v_C_i_2 = (int)get_local_id(1);
            {
              const int v_C_j_2 = (int)get_local_id(0);
              const int m_C_local_0 = ((((v_C_i_0 + v_C_i_1) * 32) + v_C_i_2) * 8);
              const int m_C_local_1 = ((((v_C_j_0 + v_C_j_1) * 32) + v_C_j_2) * 8);
              {
                float T_C_local[64];
                #pragma unroll
                for (int v_C_local_i = 0; v_C_local_i < 8; ++v_C_local_i) {
                  #pragma unroll
                  for (int v_C_local_j = 0; v_C_local_j < 8; ++v_C_local_j) {
                    T_C_local[((v_C_local_i * 8) + v_C_local_j)] = 0.0f;
                  }
                }
                for (int v_C_local_k_0 = 0; v_C_local_k_0 < 4; ++v_C_local_k_0) {
                  for (int v_C_local_k_1 = 0; v_C_local_k_1 < 64; ++v_C_local_k_1) {
                    for (int v_C_local_k_2 = 0; v_C_local_k_2 < 1; ++v_C_local_k_2) {
                      #pragma unroll
                      for (int v_C_local_i = 0; v_C_local_i < 8; ++v_C_local_i) {
                        #pragma unroll
                        for (int v_C_local_j = 0; v_C_local_j < 8; ++v_C_local_j) {
                          T_C_local[((v_C_local_i * 8) + v_C_local_j)] += (T_A[(((m_C_local_0 + v_C_local_i) * 256) + (((v_C_local_k_0 * 64) + v_C_local_k_1) + v_C_local_k_2))] * T_B[(((((v_C_local_k_0 * 64) + v_C_local_k_1) + v_C_local_k_2) * 256) + (m_C_local_1 + v_C_local_j))]);
                        }
                      }
                    }
                  }
                }
                #pragma unroll
                for (int v_C_i_3 = 0; v_C_i_3 < 8; ++v_C_i_3) {
                  #pragma unroll
                  for (int v_C_j_3 = 0; v_C_j_3 < 8; ++v_C_j_3) {
                    T_C[(((((((v_C_i_0 + v_C_i_1) * 32) + v_C_i_2) * 8) + v_C_i_3) * 256) + (((((v_C_j_0 + v_C_j_1) * 32) + v_C_j_2) * 8) + v_C_j_3))] = T_C_local[((((((((v_C_i_0 + v_C_i_1) * 32) + v_C_i_2) * 8) + v_C_i_3) - m_C_local_0) * 8) + ((((((v_C_j_0 + v_C_j_1) * 32) + v_C_j_2) * 8) + v_C_j_3) - m_C_local_1))];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}
