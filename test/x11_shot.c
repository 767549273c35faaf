/*
 * x11_shot.c - screenshot checker for the X11 saver test
 * (test/client_xsaver.sh): grabs the root window of $DISPLAY with
 * XGetImage, writes it as a PPM (the test keeps it as evidence), and
 * prints what the saver's layout should show:
 *
 *   row N LIGHT   light (text) pixels in text row N (cl_xsaver.c: rows at
 *                 y = 30 + 18 N, 18 px apart, text from x = 20)
 *   curve GREEN   lime-green pixels (the loss curve) below the text
 *   black FRAC    share of black (background) pixels
 *
 * usage: x11_shot OUT.ppm
 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	Display *d;
	XWindowAttributes wa;
	XImage *im;
	long rows[8] = { 0 }, green = 0, black = 0;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: x11_shot OUT.ppm\n");
		return 2;
	}
	d = XOpenDisplay(NULL);
	if (d == NULL) {
		fprintf(stderr, "x11_shot: cannot open display\n");
		return 1;
	}
	XGetWindowAttributes(d, DefaultRootWindow(d), &wa);
	im = XGetImage(d, DefaultRootWindow(d), 0, 0, (unsigned)wa.width, (unsigned)wa.height,
		       AllPlanes, ZPixmap);
	if (im == NULL) {
		fprintf(stderr, "x11_shot: XGetImage failed\n");
		return 1;
	}
	f = fopen(argv[1], "wb");
	if (f == NULL) {
		perror(argv[1]);
		return 1;
	}
	fprintf(f, "P6\n%d %d\n255\n", wa.width, wa.height);
	for (int y = 0; y < wa.height; y++) {
		for (int x = 0; x < wa.width; x++) {
			unsigned long px = XGetPixel(im, x, y);
			int r = (int)((px & im->red_mask) >> 16), g = (int)((px & im->green_mask) >> 8);
			int b = (int)(px & im->blue_mask);
			int row = (y - 30 + 14) / 18;

			fputc(r, f);
			fputc(g, f);
			fputc(b, f);
			if (r > 150 && g > 150 && b > 150 && y >= 16 && row >= 0 && row < 8 &&
			    (y - 30 + 14) % 18 < 18)
				rows[row]++;
			if (y > 30 + 6 * 18 && r < 100 && g > 150 && b < 100)
				green++;
			black += r < 16 && g < 16 && b < 16;
		}
	}
	fclose(f);
	for (int i = 0; i < 8; i++)
		printf("row %d %ld\n", i, rows[i]);
	printf("curve %ld\n", green);
	printf("black %.3f\n", (double)black / ((double)wa.width * wa.height));
	XDestroyImage(im);
	XCloseDisplay(d);
	return 0;
}
