"""kcm.spark_explore: exhaustive exploration and simulation of the model on Spark."""
