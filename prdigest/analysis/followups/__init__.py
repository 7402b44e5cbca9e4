"""Earlier weeks' risks followed until a later PR reverts or addresses them."""
