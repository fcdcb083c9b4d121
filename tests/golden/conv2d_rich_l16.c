#include <stdlib.h>
#include <string.h>

void tb_kernel(float **bufs) {
  float *restrict T_I = bufs[0];
  float *restrict T_Wt = bufs[1];
  float *restrict T_O = bufs[2];
  #pragma omp parallel for schedule(static)
  for (int v_O_n_f_0_fused_y_0_fused = 0; v_O_n_f_0_fused_y_0_fused < 112; ++v_O_n_f_0_fused_y_0_fused) {
    for (int v_O_x_0 = 0; v_O_x_0 < 14; ++v_O_x_0) {
      const int m_O_local_0 = ((v_O_n_f_0_fused_y_0_fused / 14) / 8);
      const int m_O_local_1 = (((v_O_n_f_0_fused_y_0_fused / 14) % 8) * 4);
      const int m_O_local_2 = (v_O_n_f_0_fused_y_0_fused % 14);
      const int m_O_local_3 = v_O_x_0;
      {
        float T_O_local[4] __attribute__((aligned(64)));
        {
          const int v_O_local_n = 0;
          for (int v_O_local_f = 0; v_O_local_f < 4; ++v_O_local_f) {
            {
              const int v_O_local_y = 0;
              #pragma omp simd
              for (int v_O_local_x = 0; v_O_local_x < 1; ++v_O_local_x) {
                T_O_local[(v_O_local_f + v_O_local_x)] = 0.0f;
              }
            }
          }
        }
        for (int v_O_local_rc_0 = 0; v_O_local_rc_0 < 8; ++v_O_local_rc_0) {
          for (int v_O_local_ry = 0; v_O_local_ry < 3; ++v_O_local_ry) {
            for (int v_O_local_rx = 0; v_O_local_rx < 3; ++v_O_local_rx) {
              for (int v_O_local_rc_1 = 0; v_O_local_rc_1 < 2; ++v_O_local_rc_1) {
                {
                  const int v_O_local_n = 0;
                  for (int v_O_local_f = 0; v_O_local_f < 4; ++v_O_local_f) {
                    {
                      const int v_O_local_y = 0;
                      #pragma omp simd
                      for (int v_O_local_x = 0; v_O_local_x < 1; ++v_O_local_x) {
                        T_O_local[(v_O_local_f + v_O_local_x)] += (((((((m_O_local_2 + v_O_local_y) + v_O_local_ry) >= 1) && (((m_O_local_2 + v_O_local_y) + v_O_local_ry) < 15)) && (((m_O_local_3 + v_O_local_x) + v_O_local_rx) >= 1)) && (((m_O_local_3 + v_O_local_x) + v_O_local_rx) < 15)) ? (T_I[(((((m_O_local_0 + v_O_local_n) * 3136) + (((v_O_local_rc_0 * 2) + v_O_local_rc_1) * 196)) + ((((m_O_local_2 + v_O_local_y) + v_O_local_ry) - 1) * 14)) + (((m_O_local_3 + v_O_local_x) + v_O_local_rx) - 1))] * T_Wt[(((((m_O_local_1 + v_O_local_f) * 144) + (((v_O_local_rc_0 * 2) + v_O_local_rc_1) * 9)) + (v_O_local_ry * 3)) + v_O_local_rx)]) : 0.0f);
                      }
                    }
                  }
                }
              }
            }
          }
        }
        for (int v_O_f_1 = 0; v_O_f_1 < 4; ++v_O_f_1) {
          {
            const int v_O_y_1 = 0;
            #pragma omp simd
            for (int v_O_x_1 = 0; v_O_x_1 < 1; ++v_O_x_1) {
              T_O[((((((((v_O_n_f_0_fused_y_0_fused / 14) / 8) * 6272) + (((v_O_n_f_0_fused_y_0_fused / 14) % 8) * 784)) + (v_O_f_1 * 196)) + ((v_O_n_f_0_fused_y_0_fused % 14) * 14)) + v_O_x_0) + v_O_x_1)] = T_O_local[(((((((v_O_n_f_0_fused_y_0_fused / 14) / 8) - m_O_local_0) * 4) + (((((v_O_n_f_0_fused_y_0_fused / 14) % 8) * 4) + v_O_f_1) - m_O_local_1)) + (((v_O_n_f_0_fused_y_0_fused % 14) + v_O_y_1) - m_O_local_2)) + ((v_O_x_0 + v_O_x_1) - m_O_local_3))];
            }
          }
        }
      }
    }
  }
}
