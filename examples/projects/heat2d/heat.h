#pragma once
// Runs `steps` heat steps; the result ends in d_u.
void simulate(float* d_u, float* d_tmp, int nx, int ny, float alpha, int steps);
