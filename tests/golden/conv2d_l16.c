#include <stdlib.h>
#include <string.h>

void tb_kernel(float **bufs) {
  float *restrict T_I = bufs[0];
  float *restrict T_Wt = bufs[1];
  float *restrict T_O = bufs[2];
  #pragma omp parallel for schedule(static)
  for (int v_O_n_f_0_fused_y_fused = 0; v_O_n_f_0_fused_y_fused < 448; ++v_O_n_f_0_fused_y_fused) {
    for (int v_O_x_0 = 0; v_O_x_0 < 7; ++v_O_x_0) {
      {
        const int v_O_f_1 = 0;
        #pragma omp simd
        for (int v_O_x_1 = 0; v_O_x_1 < 2; ++v_O_x_1) {
          T_O[(((((((v_O_n_f_0_fused_y_fused / 14) / 32) * 6272) + (((v_O_n_f_0_fused_y_fused / 14) % 32) * 196)) + ((v_O_n_f_0_fused_y_fused % 14) * 14)) + (v_O_x_0 * 2)) + v_O_x_1)] = 0.0f;
        }
      }
      for (int v_O_rc_0 = 0; v_O_rc_0 < 8; ++v_O_rc_0) {
        for (int v_O_ry = 0; v_O_ry < 3; ++v_O_ry) {
          for (int v_O_rx = 0; v_O_rx < 3; ++v_O_rx) {
            for (int v_O_rc_1 = 0; v_O_rc_1 < 2; ++v_O_rc_1) {
              {
                const int v_O_f_1 = 0;
                #pragma omp simd
                for (int v_O_x_1 = 0; v_O_x_1 < 2; ++v_O_x_1) {
                  T_O[(((((((v_O_n_f_0_fused_y_fused / 14) / 32) * 6272) + (((v_O_n_f_0_fused_y_fused / 14) % 32) * 196)) + ((v_O_n_f_0_fused_y_fused % 14) * 14)) + (v_O_x_0 * 2)) + v_O_x_1)] += (((((((v_O_n_f_0_fused_y_fused % 14) + v_O_ry) >= 1) && (((v_O_n_f_0_fused_y_fused % 14) + v_O_ry) < 15)) && ((((v_O_x_0 * 2) + v_O_x_1) + v_O_rx) >= 1)) && ((((v_O_x_0 * 2) + v_O_x_1) + v_O_rx) < 15)) ? (T_I[((((((v_O_n_f_0_fused_y_fused / 14) / 32) * 3136) + (((v_O_rc_0 * 2) + v_O_rc_1) * 196)) + ((((v_O_n_f_0_fused_y_fused % 14) + v_O_ry) - 1) * 14)) + ((((v_O_x_0 * 2) + v_O_x_1) + v_O_rx) - 1))] * T_Wt[(((((((v_O_n_f_0_fused_y_fused / 14) % 32) + v_O_f_1) * 144) + (((v_O_rc_0 * 2) + v_O_rc_1) * 9)) + (v_O_ry * 3)) + v_O_rx)]) : 0.0f);
                }
              }
            }
          }
        }
      }
    }
  }
}
