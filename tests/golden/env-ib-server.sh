# sparkctl env: dgx-h100-07, topology switch, 8 HCAs
export NCCL_IB_HCA='=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7'
export NCCL_SOCKET_IFNAME='=eno1'
export GLOO_SOCKET_IFNAME='eno1'
export TP_SOCKET_IFNAME='eno1'
export OMPI_MCA_btl_tcp_if_include='eno1'
export UCX_NET_DEVICES='mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1'
