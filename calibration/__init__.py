"""Camera calibration: table-plane homography, layouts and card templates."""
