// stage O: 1x1x1 groups of 2x2x32
__kernel void tb_k0(__global float *restrict T_I, __global float *restrict T_Wt, __global float *restrict T_O) {
  {
    const int v_O_n_f_0_fused = (int)get_group_id(2);
    {
      const int v_O_y_0 = (int)get_group_id(1);
      {
        const int v_O_x_0 = (int)get_group_id(0);
        for (int v_O_f_1 = 0; v_O_f_1 < 1; ++v_O_f_1) {
          for (int v_O_y_1 = 0; v_O_y_1 < 1; ++v_O_y_1) {
            for (int v_O_x_1 = 0; v_O_x_1 < 1; ++v_O_x_1) {
              {
                const int v_O_f_2 = (int)get_local_id(2);
                {
                  const int v_O_y_2 = (int)get_local_id(1);
                  {
                    const int v_O_x_2 = (int)get_local_id(0);
                    const int m_O_local_0 = v_O_n_f_0_fused;
                    const int m_O_local_1 = ((v_O_f_1 * 32) + v_O_f_2);
                    const int m_O_local_2 = ((((v_O_y_0 + v_O_y_1) * 2) + v_O_y_2) * 7);
                    const int m_O_local_3 = ((((v_O_x_0 + v_O_x_1) * 2) + v_O_x_2) * 7);
                    {
                      float T_O_local[49];
                      for (int v_O_local_n = 0; v_O_local_n < 1; ++v_O_local_n) {
                        for (int v_O_local_f = 0; v_O_local_f < 1; ++v_O_local_f) {
                          #pragma unroll
                          for (int v_O_local_y = 0; v_O_local_y < 7; ++v_O_local_y) {
                            #pragma unroll
                            for (int v_O_local_x = 0; v_O_local_x < 7; ++v_O_local_x) {
                              T_O_local[((((v_O_local_n * 49) + (v_O_local_f * 49)) + (v_O_local_y * 7)) + v_O_local_x)] = 0.0f;
                            }
                          }
                        }
                      }
                      for (int v_O_local_rc_0 = 0; v_O_local_rc_0 < 16; ++v_O_local_rc_0) {
                        for (int v_O_local_ry_0 = 0; v_O_local_ry_0 < 1; ++v_O_local_ry_0) {
                          #pragma unroll
                          for (int v_O_local_rx_0 = 0; v_O_local_rx_0 < 3; ++v_O_local_rx_0) {
                            for (int v_O_local_rc_1 = 0; v_O_local_rc_1 < 1; ++v_O_local_rc_1) {
                              #pragma unroll
                              for (int v_O_local_ry_1 = 0; v_O_local_ry_1 < 3; ++v_O_local_ry_1) {
                                for (int v_O_local_rx_1 = 0; v_O_local_rx_1 < 1; ++v_O_local_rx_1) {
                                  for (int v_O_local_n = 0; v_O_local_n < 1; ++v_O_local_n) {
                                    for (int v_O_local_f = 0; v_O_local_f < 1; ++v_O_local_f) {
                                      #pragma unroll
                                      for (int v_O_local_y = 0; v_O_local_y < 7; ++v_O_local_y) {
                                        #pragma unroll
                                        for (int v_O_local_x = 0; v_O_local_x < 7; ++v_O_local_x) {
                                          T_O_local[((((v_O_local_n * 49) + (v_O_local_f * 49)) + (v_O_local_y * 7)) + v_O_local_x)] += (((((((m_O_local_2 + v_O_local_y) + ((v_O_local_ry_0 * 3) + v_O_local_ry_1)) >= 1) && (((m_O_local_2 + v_O_local_y) + ((v_O_local_ry_0 * 3) + v_O_local_ry_1)) < 15)) && (((m_O_local_3 + v_O_local_x) + (v_O_local_rx_0 + v_O_local_rx_1)) >= 1)) && (((m_O_local_3 + v_O_local_x) + (v_O_local_rx_0 + v_O_local_rx_1)) < 15)) ? (T_I[(((((m_O_local_0 + v_O_local_n) * 3136) + ((v_O_local_rc_0 + v_O_local_rc_1) * 196)) + ((((m_O_local_2 + v_O_local_y) + ((v_O_local_ry_0 * 3) + v_O_local_ry_1)) - 1) * 14)) + (((m_O_local_3 + v_O_local_x) + (v_O_local_rx_0 + v_O_local_rx_1)) - 1))] * T_Wt[(((((m_O_local_1 + v_O_local_f) * 144) + ((v_O_local_rc_0 + v_O_local_rc_1) * 9)) + (((v_O_local_ry_0 * 3) + v_O_local_ry_1) * 3)) + (v_O_local_rx_0 + v_O_local_rx_1))]) : 0.0f);
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
                      for (int v_O_f_3 = 0; v_O_f_3 < 1; ++v_O_f_3) {
                        #pragma unroll
                        for (int v_O_y_3 = 0; v_O_y_3 < 7; ++v_O_y_3) {
                          #pragma unroll
                          for (int v_O_x_3 = 0; v_O_x_3 < 7; ++v_O_x_3) {
                            T_O[((((v_O_n_f_0_fused * 6272) + ((((v_O_f_1 * 32) + v_O_f_2) + v_O_f_3) * 196)) + ((((((v_O_y_0 + v_O_y_1) * 2) + v_O_y_2) * 7) + v_O_y_3) * 14)) + (((((v_O_x_0 + v_O_x_1) * 2) + v_O_x_2) * 7) + v_O_x_3))] = T_O_local[(((((v_O_n_f_0_fused - m_O_local_0) * 49) + (((((v_O_f_1 * 32) + v_O_f_2) + v_O_f_3) - m_O_local_1) * 49)) + (((((((v_O_y_0 + v_O_y_1) * 2) + v_O_y_2) * 7) + v_O_y_3) - m_O_local_2) * 7)) + ((((((v_O_x_0 + v_O_x_1) * 2) + v_O_x_2) * 7) + v_O_x_3) - m_O_local_3))];
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
      }
    }
  }
}
